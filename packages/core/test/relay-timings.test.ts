import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTestDb,
  createTopics,
  sleep,
  type TestDb,
  testKafka,
  waitFor,
} from '../../testkit/src/index.ts';
import { orderEvent, RelayHarness } from './support/relay.ts';

describe('relay timings on the real stack: membership outlasts every sleep and backoff', () => {
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

  /** Each member's shard count, as it last computed it. */
  async function split(): Promise<Record<string, number>> {
    const { rows } = await db.pool.query<{ replica_id: string; n: number }>(
      'SELECT replica_id, cardinality(shards)::int AS n FROM outbox_relay_members ORDER BY replica_id',
    );
    return Object.fromEntries(rows.map((r) => [r.replica_id, r.n]));
  }

  it('an idle replica and one backing off after failed ticks keep their shards across poll and backoff cycles', async () => {
    // Default timings (5 s poll). 'r-a' sorts first: even shards; 'r-b' odd shards.
    const a = await h.relay({
      topics: { order: topic },
      listen: db.config,
      replicaId: 'r-a',
      pollIntervalMs: undefined,
    });
    const b = await h.relay({
      topics: { order: topic },
      listen: db.config,
      replicaId: 'r-b',
      pollIntervalMs: undefined,
      // Every tick of r-b fails after the produce: a real failure, so it backs off.
      hooks: {
        afterPublish() {
          throw new Error('r-b cannot mark its rows sent');
        },
      },
    });
    await Promise.all([a.start(), b.start()]);
    await waitFor(async () => JSON.stringify(await split()) === '{"r-a":32,"r-b":32}', {
      timeoutMs: 30_000,
      what: 'the shards divided 32/32',
    });
    // Rows only in r-b's (odd) shards: r-b claims them and fails, over and over.
    const { rows } = await db.pool.query<{ id: string }>(
      `SELECT id FROM (SELECT 'odd-' || g AS id FROM generate_series(1, 200) g) s
       WHERE ((hashtext(id) & 2147483647) % 64) % 2 = 1 LIMIT 5`,
    );
    await h.append(rows.map((r) => orderEvent(r.id, 1)));

    // 30 s: past a dozen failure backoffs at their cap and several 5 s polls of r-a.
    const seen = new Set<string>();
    const until = Date.now() + 30_000;
    while (Date.now() < until) {
      seen.add(JSON.stringify(await split()));
      await sleep(100);
    }
    const { rows: failing } = await db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL',
    );
    // Never a moment where r-a took r-b for dead (r-a alone: 64 shards)...
    expect([...seen]).toEqual(['{"r-a":32,"r-b":32}']);
    // ...so r-b's rows, failing all along, were never relayed by r-a.
    expect(failing[0]?.n).toBe(rows.length);
  });

  it('a poll interval over 30 s: a relay asleep for more than 30 s is still notified', async () => {
    // Unsharded: a started sharded relay heartbeats on its assigner's timer while asleep
    // (relay.heartbeat.test.ts), so its heartbeat never gets 31 s old; an unsharded one
    // beats only when it ticks or falls asleep, and writers must go by its own TTL.
    const relay = await h.relay({
      topics: { order: topic },
      listen: db.config,
      pollIntervalMs: 60_000,
      sharded: false,
    });
    await h.append([orderEvent('warm-up', 1)]);
    await relay.start();
    await waitFor(async () => (await h.pending()) === 0, { what: 'the warm-up published' });
    // Asleep, its last heartbeat more than 30 s old (what 000003 hard-coded).
    await waitFor(
      async () => {
        const { rows } = await db.pool.query<{ ok: boolean }>(
          `SELECT sleeping AND heartbeat_at < now() - interval '31 seconds' AS ok
           FROM outbox_relay_members WHERE replica_id = $1`,
          [relay.replicaId],
        );
        return rows[0]?.ok;
      },
      { timeoutMs: 50_000, intervalMs: 250, what: 'the relay asleep for 31 s' },
    );
    const appended = Date.now();
    await h.append([orderEvent('after-31-s', 1)]);
    await waitFor(async () => (await h.pending()) === 0, {
      timeoutMs: 40_000,
      intervalMs: 20,
      what: 'the row published',
    });
    const elapsed = Date.now() - appended;
    console.info(`published ${elapsed} ms after the append (the poll was ~29 s away)`);
    expect(elapsed).toBeLessThan(5_000);
  });
});
