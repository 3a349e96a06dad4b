import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDb, createTopics, type TestDb, testKafka } from '../../testkit/src/index.ts';
import { orderEvent, RelayHarness } from './support/relay.ts';

/**
 * The shard's advisory lock is what keeps two replicas off one shard while their views
 * of the membership disagree; the claim takes it in the same statement
 * (claimLockedShardBatch). A session holding a shard's lock stands for the other
 * replica: its rows stay where they are, the other shards' rows are relayed.
 */
describe('a sharded claim skips the shards whose lock another transaction holds', () => {
  const kafka = testKafka();
  let db: TestDb;
  let h: RelayHarness;
  let topics: Record<string, string>;

  beforeEach(async () => {
    db = await createTestDb();
    h = new RelayHarness(db, kafka);
    topics = await createTopics(kafka, ['orders']);
  });
  afterEach(async () => {
    await h.close();
    await db.close();
  });

  it('relays only the free shards, then the held one once its lock is gone', async () => {
    const ids = await h.append(Array.from({ length: 40 }, (_, i) => orderEvent(`agg-${i}`, 1)));
    const { rows } = await db.pool.query<{ shard: number; n: string }>(
      `SELECT shard, count(*) AS n FROM outbox WHERE id = ANY($1::bigint[])
        GROUP BY shard ORDER BY count(*) DESC, shard LIMIT 1`,
      [ids],
    );
    const held = rows[0]!;
    const other = await db.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(
        `SELECT pg_advisory_xact_lock(hashtext('outbox_shard.' || current_schema()), $1)`,
        [held.shard],
      );
      const relay = await h.relay({ topics: { order: topics.orders! }, sharded: true });
      const first = await relay.tick();
      expect(first).toMatchObject({ claimed: ids.length - Number(held.n), failed: 0 });
      const { rows: left } = await db.pool.query<{ shard: number }>(
        'SELECT DISTINCT shard FROM outbox WHERE sent_at IS NULL',
      );
      expect(left.map((r) => r.shard)).toEqual([held.shard]);

      await other.query('COMMIT');
      expect(await relay.tick()).toMatchObject({ claimed: Number(held.n), sent: Number(held.n) });
      expect(await h.pending()).toBe(0);
    } finally {
      other.release();
    }
  });

  it('claims nothing, without an error, when every shard it wants is held', async () => {
    await h.append([orderEvent('a', 1), orderEvent('b', 1)]);
    const other = await db.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(
        `SELECT pg_advisory_xact_lock(hashtext('outbox_shard.' || current_schema()), s)
           FROM generate_series(0, 63) AS s`,
      );
      const relay = await h.relay({ topics: { order: topics.orders! }, sharded: true });
      expect(await relay.tick()).toEqual({ claimed: 0, sent: 0, failed: 0, heldBack: 0 });
      expect(await h.pending()).toBe(2);
      await other.query('COMMIT');
    } finally {
      other.release();
    }
  });
});
