import { OutboxRelay, OutboxWriter, withTransaction } from '@outbox/core';
import type { Producer } from 'kafkajs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  dayOf,
  enablePartitioning,
  isPartitioned,
  maintainPartitions,
  partitions,
  runRetention,
} from '../src/index.ts';
import { createTestDb, readTopic, type TestDb, testKafka } from '@outbox/testkit';
import { age, appendEvents, outboxIds } from './support/db.ts';
import { createTopic, idempotentProducer } from './support/kafka.ts';

const DAY = 86_400;

describe('opt-in daily partitions of the outbox', () => {
  const kafka = testKafka();
  let db: TestDb;
  let producer: Producer | undefined;
  const relays: OutboxRelay[] = [];

  beforeEach(async () => {
    db = await createTestDb({ max: 8 });
  });
  afterEach(async () => {
    await Promise.all(relays.map((r) => r.stop()));
    relays.length = 0;
    await producer?.disconnect();
    producer = undefined;
    await db.close();
  });

  async function partitionOf(id: string): Promise<string> {
    const { rows } = await db.pool.query<{ part: string }>(
      'SELECT tableoid::regclass::text AS part FROM outbox WHERE id = $1',
      [id],
    );
    return rows[0]!.part;
  }

  it('enable converts the outbox in place: same rows and ids, indexes, trigger, settings; relaying goes on', async () => {
    const sentOld = await appendEvents(db, 'a', 3);
    await age(db, sentOld, 3 * DAY, true);
    const pending = await appendEvents(db, 'b', 2);
    const before = await outboxIds(db);

    const result = await enablePartitioning(db.pool, { daysAhead: 2 });
    expect(result.converted).toBe(true);
    expect(result.copiedRows).toBe(5);
    expect(await isPartitioned(db.pool)).toBe(true);
    expect(await outboxIds(db)).toEqual(before);
    expect(await partitionOf(sentOld[0]!)).toBe(dayOf(new Date(Date.now() - 3 * DAY * 1000)).name);
    expect(await partitionOf(pending[0]!)).toBe(dayOf(new Date()).name);
    // From three days ago to two ahead, plus the DEFAULT catch-all.
    const names = (await partitions(db.pool)).map((p) => p.name);
    expect(names).toHaveLength(6 + 1);
    expect(names).toContain('outbox_default');

    const indexes = await db.pool.query<{ name: string }>(
      "SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'outbox' ORDER BY 1",
    );
    expect(indexes.rows.map((r) => r.name)).toEqual([
      'outbox_aggregate_idx',
      'outbox_blocking_idx',
      'outbox_pending_idx',
      'outbox_pending_shard_idx',
      'outbox_pkey',
    ]);
    const trigger = await db.pool.query(
      "SELECT 1 FROM pg_trigger WHERE tgrelid = 'outbox'::regclass AND tgname = 'outbox_notify_trigger'",
    );
    expect(trigger.rowCount).toBe(1);
    const settings = await db.pool.query<{ opts: string[] }>(
      'SELECT reloptions AS opts FROM pg_class WHERE oid = $1::regclass',
      [dayOf(new Date()).name],
    );
    expect(settings.rows[0]?.opts).toContain('autovacuum_vacuum_scale_factor=0.01');

    // Appends keep their id sequence and land in today's partition.
    const [next] = await withTransaction(db.pool, (c) =>
      new OutboxWriter().appendBatch(c, [
        { aggregateType: 'order', aggregateId: 'b', eventType: 'OrderEvent', payload: { seq: 3 } },
      ]),
    );
    expect(BigInt(next!.id)).toBeGreaterThan(BigInt(before.at(-1)!));
    expect(await partitionOf(next!.id)).toBe(dayOf(new Date()).name);

    // The unchanged relay (sharded claims, SKIP LOCKED, markSent, markFailed) works on it.
    const topic = await createTopic(kafka, 'orders');
    producer = await idempotentProducer(kafka);
    await withTransaction(db.pool, (c) =>
      new OutboxWriter().append(c, {
        aggregateType: 'invoice',
        aggregateId: 'i',
        eventType: 'X',
        payload: {},
      }),
    );
    const relay = new OutboxRelay({ pool: db.pool, producer, topics: { order: topic } });
    relays.push(relay);
    const tick = await relay.tick();
    expect(tick).toMatchObject({ claimed: 4, sent: 3, failed: 1 });
    const received = await readTopic(kafka, topic, 3);
    expect(received.map((m) => m.headers.event_id).sort()).toEqual([...pending, next!.id].sort());

    // A second enable is a no-op.
    expect((await enablePartitioning(db.pool)).converted).toBe(false);
  });

  it('maintain: creates days ahead, drops days past retention, keeps a day with an unsent row', async () => {
    const sent5 = await appendEvents(db, 'five', 2);
    await age(db, sent5, 5 * DAY, true);
    const sent4 = await appendEvents(db, 'four', 2);
    await age(db, sent4, 4 * DAY, true);
    const stuck = await appendEvents(db, 'stuck', 1); // dead-lettered, 4 days old
    await age(db, stuck, 4 * DAY, false);
    await db.pool.query(
      "UPDATE outbox SET attempts = 10, dead_lettered_at = now(), error = 'x' WHERE id = $1",
      [stuck[0]],
    );
    const fresh = await appendEvents(db, 'fresh', 1);
    await enablePartitioning(db.pool, { daysAhead: 1 });

    const result = await maintainPartitions(db.pool, { retentionSeconds: 2 * DAY, daysAhead: 3 });
    const day = (daysAgo: number) => dayOf(new Date(Date.now() - daysAgo * DAY * 1000)).name;
    expect(result.created).toEqual([day(-2), day(-3)]);
    // Day 3 is empty (created by enable to cover the span) and past retention too.
    expect(result.dropped).toEqual([day(5), day(3)]);
    expect(result.kept).toEqual([
      { name: day(4), reason: '1 rows never sent (pending or dead-lettered)' },
    ]);
    expect(result.defaultRows).toBe(0);
    expect(await outboxIds(db)).toEqual([...sent4, ...stuck, ...fresh]);

    // Idempotent: nothing more to do.
    const again = await maintainPartitions(db.pool, { retentionSeconds: 2 * DAY, daysAhead: 3 });
    expect(again).toMatchObject({ created: [], dropped: [] });
  });

  it('a row no daily partition covers lands in DEFAULT: the append never fails; maintain reports it', async () => {
    await enablePartitioning(db.pool, { daysAhead: 1 });
    const far = new Date(Date.now() + 30 * DAY * 1000);
    await db.pool.query(
      "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, created_at) VALUES ('order', 'z', 'E', '{}', $1)",
      [far],
    );
    const result = await maintainPartitions(db.pool, { retentionSeconds: 7 * DAY, daysAhead: 1 });
    expect(result.defaultRows).toBe(1);
    const { rows } = await db.pool.query<{ part: string }>(
      "SELECT tableoid::regclass::text AS part FROM outbox WHERE aggregate_id = 'z'",
    );
    expect(rows[0]?.part).toBe('outbox_default');
  });

  it('the cleanup job drops partitions instead of deleting rows once the layout is partitioned', async () => {
    const old = await appendEvents(db, 'old', 3);
    await age(db, old, 10 * DAY, true);
    await enablePartitioning(db.pool);
    const report = await runRetention(db.pool, { outboxSeconds: 7 * DAY, inboxSeconds: 8 * DAY });
    expect(report.layout).toBe('partitioned');
    const day = (daysAgo: number) => dayOf(new Date(Date.now() - daysAgo * DAY * 1000)).name;
    // Every day whose end is more than 7 days back: 10, 9 (empty) and 8 (empty).
    expect(report.partitions?.dropped).toEqual([day(10), day(9), day(8)]);
    expect(report.outbox.deleted).toBe(0);
    expect(await outboxIds(db)).toEqual([]);
  });
});
