import { type Publisher, type PublisherDeps, logError, sleep } from './publisher.ts';

const BATCH_SIZE = 100;
const POLL_INTERVAL_MS = 200;

interface SeedRow {
  id: string;
  aggregate_type: string;
  aggregate_id: string;
  event_type: string;
  payload: string;
}

/**
 * The seed's row-by-row OutboxPublisher (PHP/C#/Python), translated faithfully: claim
 * 100 rows with SKIP LOCKED in a transaction, then for each row produce it, wait for
 * the broker's ack (the seed's `flush(5000)` / `send_and_wait`) and UPDATE that row;
 * COMMIT; sleep 200 ms only when a tick found nothing.
 */
export function seedRowPublisher(deps: PublisherDeps): Publisher {
  let stopping = false;
  let loop: Promise<void> | undefined;

  async function tick(): Promise<number> {
    const client = await deps.pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<SeedRow>(
        `SELECT id, aggregate_type, aggregate_id, event_type, payload::text AS payload
         FROM outbox WHERE sent_at IS NULL ORDER BY id ASC LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [BATCH_SIZE],
      );
      for (const row of rows) {
        // Partition key = aggregate_id; resolves once the broker acked (acks = all).
        await deps.producer.send({
          topic: deps.topic,
          acks: -1,
          timeout: 5_000,
          messages: [
            {
              key: row.aggregate_id,
              value: row.payload,
              headers: { event_type: row.event_type, event_id: row.id },
            },
          ],
        });
        await client.query('UPDATE outbox SET sent_at = now() WHERE id = $1', [row.id]);
      }
      await client.query('COMMIT');
      return rows.length;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      logError('seed row-by-row tick failed', error);
      return 0;
    } finally {
      client.release();
    }
  }

  return {
    async start() {
      loop = (async () => {
        while (!stopping) {
          if ((await tick()) === 0) await sleep(POLL_INTERVAL_MS);
        }
      })();
    },
    async stop() {
      stopping = true;
      await loop;
    },
  };
}
