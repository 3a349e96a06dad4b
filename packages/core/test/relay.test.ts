import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutboxMetrics, ShardAssigner } from '../src/index.ts';
import {
  createTestDb,
  createTopics,
  readTopic,
  type TestDb,
  testKafka,
  waitFor,
} from '../../testkit/src/index.ts';
import { orderEvent, RelayHarness } from './support/relay.ts';

describe('OutboxRelay', () => {
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

  it('publishes an appended event to its topic with key = aggregate_id and the headers', async () => {
    const [id] = await h.append([orderEvent('order-42', 1)]);
    const relay = await h.relay({ topics: { order: topics.orders! } });
    expect(await relay.tick()).toMatchObject({ claimed: 1, sent: 1, failed: 0 });

    const [message, ...rest] = await readTopic(kafka, topics.orders!, 1);
    expect(rest).toEqual([]);
    expect(message).toMatchObject({
      key: 'order-42',
      headers: {
        event_id: id,
        event_type: 'OrderEvent',
        event_version: '1',
        aggregate_type: 'order',
        correlationId: 'corr-order-42-1',
      },
    });
    expect(JSON.parse(message!.value)).toEqual({ orderId: 'order-42', seq: 1 });
    const { rows } = await db.pool.query('SELECT sent_at, topic FROM outbox WHERE id = $1', [id]);
    expect(rows[0].sent_at).toBeInstanceOf(Date);
    expect(rows[0].topic).toBe(topics.orders);
  });

  it('records the partition and offset Kafka acknowledged for each row, as a reader finds them', async () => {
    // 3 sends of 100 over 3 partitions: offsets continue across sends, and a send's
    // messages for one partition are numbered from its batch's base offset.
    const events = Array.from({ length: 300 }, (_, i) => orderEvent(`agg-${i % 23}`, i));
    const ids = await h.append(events);
    const relay = await h.relay({ topics: { order: topics.orders! }, batchSize: 100 });
    for (let i = 0; i < 3; i += 1) expect((await relay.tick()).sent).toBe(100);

    const read = await readTopic(kafka, topics.orders!, ids.length);
    const onTopic = new Map(read.map((m) => [m.headers.event_id, `${m.partition}@${m.offset}`]));
    const { rows } = await db.pool.query<{ id: string; at: string | null }>(
      `SELECT id::text, kafka_partition || '@' || kafka_offset AS at FROM outbox ORDER BY id`,
    );
    expect(rows).toHaveLength(ids.length);
    for (const row of rows) expect(row.at, `row ${row.id}`).toBe(onTopic.get(row.id));
    expect(new Set(rows.map((r) => r.at?.split('@')[0])).size).toBe(3);
  });

  it('wakes on NOTIFY instead of waiting for the fallback poll', async () => {
    const relay = await h.relay({
      topics: { order: topics.orders! },
      listen: db.config,
      pollIntervalMs: 120_000,
    });
    await relay.start();
    // Let the first (empty) tick run and the relay fall asleep for 2 minutes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await h.append([orderEvent('a', 1)]);
    // Published long before the 120 s poll would have fired.
    await waitFor(async () => (await h.pending()) === 0, {
      timeoutMs: 20_000,
      what: 'the notify wake-up',
    });
  });

  it('two relays draining the same backlog publish each event exactly once', async () => {
    const events = Array.from({ length: 2_000 }, (_, i) => orderEvent(`agg-${i % 97}`, i));
    const ids = await h.append(events);
    const options = { topics: { order: topics.orders! }, batchSize: 100, sharded: false };
    const [a, b] = [await h.relay(options), await h.relay(options)];
    await Promise.all([a.start(), b.start()]);
    await waitFor(async () => (await h.pending()) === 0, { what: 'backlog drained' });

    const received = await readTopic(kafka, topics.orders!, ids.length, { settleMs: 1_500 });
    expect(received).toHaveLength(ids.length);
    expect(new Set(received.map((m) => m.headers.event_id)).size).toBe(ids.length);
  });

  it('sharded replicas keep FIFO per aggregate and divide the work', async () => {
    const aggregates = 40;
    const perAggregate = 25;
    const events = [];
    for (let seq = 0; seq < perAggregate; seq += 1) {
      for (let a = 0; a < aggregates; a += 1) events.push(orderEvent(`agg-${a}`, seq));
    }
    const options = { topics: { order: topics.orders! }, batchSize: 37, sharded: true };
    const relays = [await h.relay(options), await h.relay(options), await h.relay(options)];
    // Let them see each other, then feed them in chunks while they run.
    await Promise.all(relays.map((r) => r.tick()));
    await Promise.all(relays.map((r) => r.start()));
    for (let i = 0; i < events.length; i += 100) await h.append(events.slice(i, i + 100));
    await waitFor(async () => (await h.pending()) === 0, { what: 'backlog drained' });

    const received = await readTopic(kafka, topics.orders!, events.length, { settleMs: 1_000 });
    expect(received).toHaveLength(events.length);
    const bySeq = new Map<string, number[]>();
    for (const m of received.sort(
      (x, y) => x.partition - y.partition || Number(x.offset) - Number(y.offset),
    )) {
      const list = bySeq.get(m.key) ?? [];
      list.push(JSON.parse(m.value).seq);
      bySeq.set(m.key, list);
    }
    for (const [, seqs] of bySeq) expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    // Once every replica has seen the other two, the 64 shards are split among the
    // three, none twice.
    const all = await waitFor(
      async () => {
        const { rows } = await db.pool.query<{ shards: number[] }>(
          'SELECT shards FROM outbox_relay_members',
        );
        const shards = rows.flatMap((r) => r.shards).sort((x, y) => x - y);
        return rows.length === 3 && shards.length === 64 && shards;
      },
      { what: 'the shard split' },
    );
    expect(all).toEqual(Array.from({ length: 64 }, (_, i) => i));
  });

  it('a replica that leaves hands its shards over without manual numbering', async () => {
    const options = { topics: { order: topics.orders! }, sharded: true };
    const a = await h.relay(options);
    const b = await h.relay(options);
    await a.tick();
    await b.tick();
    await b.stop();
    await h.append(Array.from({ length: 50 }, (_, i) => orderEvent(`k-${i}`, 0)));
    // a alone now owns every shard and drains everything.
    await waitFor(
      async () => {
        await a.tick();
        return (await h.pending()) === 0;
      },
      { timeoutMs: 10_000, what: 'takeover of the departed replica' },
    );
  });

  it('a replica that ran unsharded counts again in the split once it is sharded', async () => {
    await db.pool.query(
      "INSERT INTO outbox_relay_members (replica_id, sharded) VALUES ('r-1', false), ('r-2', true)",
    );
    const assigner = new ShardAssigner(db.pool, { replicaId: 'r-1' });
    expect(await assigner.shards()).toHaveLength(32);
    const { rows } = await db.pool.query(
      "SELECT sharded FROM outbox_relay_members WHERE replica_id = 'r-1'",
    );
    expect(rows[0].sharded).toBe(true);
  });

  it('an unknown aggregate type is an error on its row; the relay goes on with the rest', async () => {
    await h.append([
      { aggregateType: 'invoice', aggregateId: 'inv-1', eventType: 'InvoiceIssued', payload: {} },
      orderEvent('o-1', 1),
    ]);
    const relay = await h.relay({ topics: { order: topics.orders! } });
    expect(await relay.tick()).toMatchObject({ claimed: 2, sent: 1, failed: 1 });
    const { rows } = await db.pool.query(
      "SELECT attempts, error, sent_at, next_attempt_at > now() AS backing_off FROM outbox WHERE aggregate_type = 'invoice'",
    );
    expect(rows[0]).toMatchObject({ attempts: 1, sent_at: null, backing_off: true });
    expect(rows[0].error).toMatch(/unknown aggregate type "invoice"/);
  });

  it('exports the seed metrics', async () => {
    const registry = new Registry();
    const metrics = new OutboxMetrics(registry, db.pool);
    await h.append([orderEvent('m', 1), orderEvent('m', 2), orderEvent('n', 1)]);
    const before = await registry.getSingleMetricAsString('outbox_pending');
    expect(before).toMatch(/outbox_pending 3/);
    const relay = await h.relay({ topics: { order: topics.orders! }, metrics });
    await relay.tick();
    await new Promise((resolve) => setTimeout(resolve, 150));
    const text = await registry.metrics();
    expect(text).toMatch(/outbox_pending 0/);
    expect(text).toMatch(
      new RegExp(`outbox_published_total\\{topic="${topics.orders!.replace(/\./g, '\\.')}"\\} 3`),
    );
    expect(text).toMatch(/outbox_worker_tick_duration_seconds_count 1/);
    expect(text).toMatch(/outbox_lag_seconds 0/);
  });
});
