import { Partitioners, type Producer } from 'kafkajs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ISOLATION_MAX_SENDS, type OutboxEvent } from '../src/index.ts';
import {
  createTopics,
  readTopic,
  type Received,
  type TestDb,
  createTestDb,
  testKafka,
} from '../../testkit/src/index.ts';
import { orderEvent, RelayHarness } from './support/relay.ts';

// Over a partition's worth of the good rows below (~100 rows of ~400 bytes), under the
// culprit's payload: only the culprit is refused (MESSAGE_TOO_LARGE).
const TOPIC_MAX_BYTES = 200_000;
const AGGREGATES = 100;
const EVENTS_EACH = 3;
const PARTITIONS = 3;

/** The partition kafkajs' murmur2 partitioner (the relay's) gives `key` on `PARTITIONS`. */
function partitionOfKey(topic: string, key: string): number {
  return Partitioners.DefaultPartitioner()({
    topic,
    partitionMetadata: Array.from({ length: PARTITIONS }, (_, partitionId) => ({
      partitionId,
      leader: 0,
      replicas: [0],
      isr: [0],
      partitionErrorCode: 0,
    })),
    message: { key, value: null },
  });
}

/**
 * A batch that Kafka refuses because of a few rows is searched for them without one
 * produce request per row: a batch of 500 rows produced row by row held the claim's
 * transaction (and its shard locks) for one round-trip per row, up to 30 s each.
 */
describe('relay: the rows Kafka refuses are isolated in a bounded number of produce requests', () => {
  const kafka = testKafka();
  let db: TestDb;
  let h: RelayHarness;
  let produceRequests = 0;

  /** A harness producer whose Produce requests (from kafkajs' instrumentation) are counted. */
  async function countedProducer(): Promise<Producer> {
    const producer = await h.producer();
    producer.on(producer.events.REQUEST, (e) => {
      if (e.payload.apiName === 'Produce') produceRequests += 1;
    });
    return producer;
  }

  beforeEach(async () => {
    db = await createTestDb();
    h = new RelayHarness(db, kafka);
    produceRequests = 0;
  });
  afterEach(async () => {
    await h.close();
    await db.close();
  });

  const relayOn = async (topic: string) =>
    h.relay({
      topics: { order: topic },
      producer: await countedProducer(),
      renewProducer: async (broken) => {
        await broken.disconnect();
        return countedProducer();
      },
    });

  it('one MESSAGE_TOO_LARGE row among 302: at most 1 + partitions + 2·log2(n) requests, every good row once in its partition', async () => {
    const { big: topic } = await createTopics(kafka, ['big'], {
      configEntries: [{ name: 'max.message.bytes', value: String(TOPIC_MAX_BYTES) }],
    });
    // Interleaved as orders arrive: seq 1 of every order, then seq 2, …; the culprit "C"
    // sits in the middle, followed later by a second event of its own.
    const events: OutboxEvent[] = [];
    for (let seq = 1; seq <= EVENTS_EACH; seq += 1) {
      for (let a = 0; a < AGGREGATES; a += 1) {
        events.push(orderEvent(`order-${String(a)}`, seq));
        if (seq === 2 && a === AGGREGATES / 2)
          events.push(orderEvent('C', 1, { blob: 'x'.repeat(TOPIC_MAX_BYTES * 1.5) }));
      }
    }
    events.push(orderEvent('C', 2));
    const ids = await h.append(events);
    const culprit = ids[events.findIndex((e) => e.aggregateId === 'C')]!;
    const culpritNext = ids.at(-1)!;
    const good = ids.filter((id) => id !== culprit && id !== culpritNext);

    const relay = await relayOn(topic!);
    produceRequests = 0;
    const result = await relay.tick();
    const bound = 1 + PARTITIONS + 2 * Math.ceil(Math.log2(events.length));
    expect(
      { ...result, produceRequests: produceRequests <= bound ? 'bounded' : produceRequests },
      `Produce requests ${String(produceRequests)}, bound ${String(bound)}`,
    ).toEqual({
      claimed: events.length,
      sent: good.length,
      failed: 1,
      heldBack: 1,
      produceRequests: 'bounded',
    });

    const { rows } = await db.pool.query<{ id: string; attempts: number; error: string | null }>(
      'SELECT id, attempts, error FROM outbox WHERE id = ANY($1::bigint[]) ORDER BY id',
      [[culprit, culpritNext]],
    );
    expect(rows[0]).toMatchObject({ id: culprit, attempts: 1 });
    expect(rows[0]!.error).toMatch(/MESSAGE_TOO_LARGE|too large/i);
    expect(rows[1]).toMatchObject({ id: culpritNext, attempts: 0, error: null });

    const received = await readTopic(kafka, topic!, {
      until: (r) => new Set(r.map((m) => m.headers.event_id)).size >= good.length,
      settleMs: 2_000,
    });
    const copies = new Map<string, Received[]>();
    for (const m of received)
      copies.set(m.headers.event_id!, [...(copies.get(m.headers.event_id!) ?? []), m]);
    expect(new Set(copies.keys())).toEqual(new Set(good));
    // The culprit's partition was refused as a whole, so it holds each of its rows once;
    // the refused first request had written the other partitions, which got the
    // isolation's copy too (the inbox drops it): never more than two.
    const refusedPartition = partitionOfKey(topic!, 'C');
    for (const [id, list] of copies) {
      if (list[0]!.partition === refusedPartition) expect(list, id).toHaveLength(1);
      else expect(list.length, id).toBeLessThanOrEqual(2);
    }
    // Each good row records the copy the isolation's send had acknowledged: the last one.
    const recorded = await db.pool.query<{ id: string; at: string }>(
      `SELECT id::text, kafka_partition || '@' || kafka_offset AS at FROM outbox
        WHERE id = ANY($1::bigint[])`,
      [good],
    );
    for (const { id, at } of recorded.rows) {
      const last = copies.get(id)!.at(-1)!;
      expect(at, id).toBe(`${last.partition}@${last.offset}`);
    }
    // FIFO per aggregate: the first copy of each event comes in the order appended.
    const firstSeqs = new Map<string, number[]>();
    const seen = new Set<string>();
    for (const m of [...received].sort(
      (x, y) => x.partition - y.partition || Number(BigInt(x.offset) - BigInt(y.offset)),
    )) {
      if (seen.has(m.headers.event_id!)) continue;
      seen.add(m.headers.event_id!);
      const seq = (JSON.parse(m.value) as { seq: number }).seq;
      firstSeqs.set(m.key, [...(firstSeqs.get(m.key) ?? []), seq]);
    }
    for (const [key, seqs] of firstSeqs) expect(seqs, key).toEqual([1, 2, 3]);
  });

  it('a batch of culprits: each tick stays within the isolation budget, releases the rest untouched, and later ticks finish the job', async () => {
    const { small: topic } = await createTopics(kafka, ['small'], {
      configEntries: [{ name: 'max.message.bytes', value: '20000' }],
    });
    const culprits = 100;
    const events: OutboxEvent[] = [
      ...Array.from({ length: culprits }, (_, i) =>
        orderEvent(`bad-${String(i)}`, 1, { blob: 'x'.repeat(30_000) }),
      ),
      ...Array.from({ length: 20 }, (_, i) => orderEvent(`good-${String(i)}`, 1)),
    ];
    const ids = await h.append(events);
    const relay = await h.relay({
      topics: { order: topic! },
      producer: await countedProducer(),
      renewProducer: async (broken) => {
        await broken.disconnect();
        return countedProducer();
      },
      // Out of the way once failed: the test watches each culprit fail once.
      retryBaseSeconds: 600,
      retryMaxSeconds: 600,
    });
    const perTick: number[] = [];
    const results = [];
    for (let tick = 0; tick < 20; tick += 1) {
      produceRequests = 0;
      const result = await relay.tick();
      if (result.claimed === 0) break;
      perTick.push(produceRequests);
      results.push(result);
      // Rows the tick neither sent nor failed went back untouched: no attempt counted.
      const { rows } = await db.pool.query<{ n: number }>(
        'SELECT coalesce(sum(attempts), 0)::int AS n FROM outbox',
      );
      expect(rows[0]!.n).toBe(results.reduce((sum, r) => sum + r.failed, 0));
    }
    expect(
      perTick.filter((n) => n > 1 + ISOLATION_MAX_SENDS),
      `Produce requests per tick: ${perTick.join(', ')}`,
    ).toEqual([]);
    expect(results[0]!.heldBack, 'the first tick released rows').toBeGreaterThan(0);
    expect(results.reduce((sum, r) => sum + r.failed, 0)).toBe(culprits);
    expect(results.reduce((sum, r) => sum + r.sent, 0)).toBe(20);
    const received = await readTopic(kafka, topic!, 20);
    expect(new Set(received.map((m) => m.headers.event_id))).toEqual(new Set(ids.slice(culprits)));
  });
});
