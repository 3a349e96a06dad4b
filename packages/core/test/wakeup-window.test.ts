import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutboxMetrics, type OutboxRelay } from '../src/index.ts';
import {
  createTestDb,
  createTopics,
  type TestDb,
  testKafka,
  waitFor,
} from '../../testkit/src/index.ts';
import { orderEvent, RelayHarness } from './support/relay.ts';

/** Ticks the relay has finished, from its own metric. */
async function ticks(registry: Registry): Promise<number> {
  const text = await registry.getSingleMetricAsString('outbox_worker_tick_duration_seconds');
  return Number(/_count\S* (\d+)/.exec(text)?.[1] ?? 0);
}

describe('wake-up window: the trigger decides "is a relay asleep?" at COMMIT', () => {
  const kafka = testKafka();
  let db: TestDb;
  let h: RelayHarness;
  let topic: string;

  beforeEach(async () => {
    db = await createTestDb();
    h = new RelayHarness(db, kafka);
    topic = (await createTopics(kafka, ['orders'])).orders!;
  });
  afterEach(async () => {
    await h.close();
    await db.close();
  });

  /** Until the relay's sleeping flag is set and it has ticked no more for 1 s. */
  async function asleep(relay: OutboxRelay, registry: Registry): Promise<void> {
    let last = -1;
    let stableSince = Date.now();
    await waitFor(
      async () => {
        const { rows } = await db.pool.query<{ sleeping: boolean }>(
          'SELECT sleeping FROM outbox_relay_members WHERE replica_id = $1',
          [relay.replicaId],
        );
        const n = await ticks(registry);
        if (n !== last || rows[0]?.sleeping !== true) {
          last = n;
          stableSince = Date.now();
        }
        return Date.now() - stableSince >= 1_000;
      },
      { timeoutMs: 30_000, what: 'the relay asleep' },
    );
  }

  it('a row inserted while the relay was awake and committed after it fell asleep is published within 500 ms', async () => {
    const registry = new Registry();
    const relay = await h.relay({
      topics: { order: topic },
      listen: db.config,
      pollIntervalMs: 10_000,
      metrics: new OutboxMetrics(registry, db.pool),
    });
    // Warm the producer (metadata, idempotence) so the bound measures the wake-up.
    await h.append([orderEvent('warm-up', 1)]);
    expect(await relay.tick()).toMatchObject({ sent: 1 });

    // The writer inserts while the relay is awake (its membership row says so)...
    const writer = await db.pool.connect();
    try {
      await writer.query('BEGIN');
      const [row] = await h.writer.appendBatch(writer, [orderEvent('late-commit', 1)]);
      // ...the relay takes its last look (the row is not committed yet) and sleeps...
      await relay.start();
      await asleep(relay, registry);
      // ...and the writer commits.
      await writer.query('COMMIT');
      const committed = Date.now();
      await waitFor(
        async () => {
          const { rows } = await db.pool.query(
            'SELECT 1 FROM outbox WHERE id = $1 AND sent_at IS NOT NULL',
            [row!.id],
          );
          return rows.length > 0;
        },
        { timeoutMs: 40_000, intervalMs: 20, what: 'the late-committed row published' },
      );
      const elapsed = Date.now() - committed;
      console.info(`late-committed row published ${elapsed} ms after its COMMIT`);
      expect(elapsed).toBeLessThan(500);
    } finally {
      writer.release();
    }
  });

  it('a writer that read "awake" just before the relay set its flag: the relay waits for that commit before its last look', async () => {
    const registry = new Registry();
    const relay = await h.relay({
      topics: { order: topic },
      listen: db.config,
      pollIntervalMs: 10_000,
      metrics: new OutboxMetrics(registry, db.pool),
    });
    await h.append([orderEvent('warm-up', 1)]);
    expect(await relay.tick()).toMatchObject({ sent: 1 });

    // A second deferred trigger, fired after outbox_notify_trigger (triggers fire in
    // name order), holds the writer in its COMMIT for 3 s after it read the flag.
    await db.pool.query(`CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_sleep(3); RETURN NULL; END; $$`);
    await db.pool.query(`CREATE CONSTRAINT TRIGGER zz_slow_commit AFTER INSERT ON outbox
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()`);

    const writer = await db.pool.connect();
    try {
      const { rows: pid } = await writer.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await writer.query('BEGIN');
      const [row] = await h.writer.appendBatch(writer, [orderEvent('slow-commit', 1)]);
      const commit = writer.query('COMMIT');
      // The writer has read the flag (relay awake: no NOTIFY) and sleeps in its COMMIT.
      await waitFor(
        async () => {
          const { rows } = await db.pool.query(
            "SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event = 'PgSleep'",
            [pid[0]!.pid],
          );
          return rows.length > 0;
        },
        { timeoutMs: 10_000, intervalMs: 20, what: 'the writer inside its COMMIT' },
      );
      // Now the relay falls asleep while that commit is still in progress.
      await relay.start();
      await commit;
      const committed = Date.now();
      await waitFor(
        async () => {
          const { rows } = await db.pool.query(
            'SELECT 1 FROM outbox WHERE id = $1 AND sent_at IS NOT NULL',
            [row!.id],
          );
          return rows.length > 0;
        },
        { timeoutMs: 40_000, intervalMs: 20, what: 'the slow-committed row published' },
      );
      const elapsed = Date.now() - committed;
      console.info(`slow-committed row published ${elapsed} ms after its COMMIT returned`);
      expect(elapsed).toBeLessThan(500);
    } finally {
      writer.release();
    }
  });
});
