import { type Publisher, type PublisherDeps, logError, sleep } from './publisher.ts';

const BATCH_SIZE = 100;
const TICK_INTERVAL_MS = 200;

interface SeedRow {
  id: string;
  aggregate_id: string;
  event_type: string;
  payload: string;
}

/**
 * The seed's batch publisher (Go/C#/Python), translated faithfully: on a 200 ms ticker,
 * claim 100 rows with SKIP LOCKED, produce them all in one request (Go's
 * WriteMessages(batch), Python's gathered sends), UPDATE them in one statement
 * (`id = ANY($1)`), COMMIT. Like Go's time.Ticker and C#'s PeriodicTimer, a tick that
 * overruns its period is followed at once by the next, and missed ticks are dropped.
 */
export function seedBatchPublisher(deps: PublisherDeps): Publisher {
  let stopping = false;
  let loop: Promise<void> | undefined;

  async function tick(): Promise<void> {
    const client = await deps.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      const { rows } = await client.query<SeedRow>(
        `SELECT id, aggregate_type, aggregate_id, event_type, payload::text AS payload
         FROM outbox WHERE sent_at IS NULL ORDER BY id ASC LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [BATCH_SIZE],
      );
      if (rows.length > 0) {
        await deps.producer.send({
          topic: deps.topic,
          acks: -1,
          timeout: 5_000,
          messages: rows.map((row) => ({
            key: row.aggregate_id,
            value: row.payload,
            headers: { event_type: row.event_type, event_id: row.id },
          })),
        });
        await client.query('UPDATE outbox SET sent_at = NOW() WHERE id = ANY($1::bigint[])', [
          rows.map((r) => r.id),
        ]);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      logError('seed batch tick failed', error);
    } finally {
      client.release();
    }
  }

  return {
    async start() {
      loop = (async () => {
        let next = performance.now() + TICK_INTERVAL_MS;
        while (!stopping) {
          await sleep(Math.max(0, next - performance.now()));
          if (stopping) break;
          await tick();
          // The next tick is due one period after this one was; if already past, now.
          next = Math.max(next + TICK_INTERVAL_MS, performance.now());
        }
      })();
    },
    async stop() {
      stopping = true;
      await loop;
    },
  };
}
