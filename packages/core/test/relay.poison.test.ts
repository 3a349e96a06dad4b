import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutboxMetrics, type OutboxEvent, type TopicMap } from '../src/index.ts';
import {
  createTestDb,
  createTopics,
  readTopic,
  type TestDb,
  testKafka,
  waitFor,
} from '../../testkit/src/index.ts';
import { orderEvent, RelayHarness } from './support/relay.ts';

// A per-topic limit the broker enforces: an "invoice" event over it is refused by Kafka
// itself (MESSAGE_TOO_LARGE), not by our append-time check.
const SMALL_TOPIC_BYTES = 2_000;
const MAX_ATTEMPTS = 3;

interface PoisonCase {
  name: string;
  /** Where "invoice" events go, given the valid orders topic and the small topic. */
  invoiceTopic: (t: { small: string }) => string | undefined;
  payload: Record<string, unknown>;
  error: RegExp;
}

// A topic that does not exist (yet) is not poison: relay.topic-unavailable.test.ts.
const cases: PoisonCase[] = [
  {
    name: 'unknown aggregate type (no topic mapped)',
    invoiceTopic: () => undefined,
    payload: { total: 10 },
    error: /unknown aggregate type "invoice"/,
  },
  {
    name: 'a topic that cannot be created (invalid name)',
    invoiceTopic: () => 'invoices events!',
    payload: { total: 10 },
    error: /INVALID_TOPIC|invalid topic/i,
  },
  {
    name: "a message over the broker's limit for its topic",
    invoiceTopic: ({ small }) => small,
    payload: { blob: 'x'.repeat(SMALL_TOPIC_BYTES * 2) },
    error: /MESSAGE_TOO_LARGE|too large/i,
  },
];

/**
 * Bad input at the relay: whatever makes one event unpublishable is recorded on its
 * row (attempts, error, backoff), dead-lettered at the cap, counted in the metrics,
 * and holds back only the later events of its own aggregate.
 */
describe('relay: poison events are retried, dead-lettered, visible, and contained', () => {
  const kafka = testKafka();
  let db: TestDb;
  let h: RelayHarness;
  let orders: string;
  let small: string;

  beforeEach(async () => {
    db = await createTestDb();
    h = new RelayHarness(db, kafka);
    orders = (await createTopics(kafka, ['orders'])).orders!;
    small = (
      await createTopics(kafka, ['small'], {
        configEntries: [{ name: 'max.message.bytes', value: String(SMALL_TOPIC_BYTES) }],
      })
    ).small!;
  });
  afterEach(async () => {
    await h.close();
    await db.close();
  });

  const invoice = (seq: number, payload: Record<string, unknown>): OutboxEvent => ({
    aggregateType: 'invoice',
    aggregateId: 'inv-1',
    eventType: 'InvoiceIssued',
    payload: { seq, ...payload },
  });

  async function rowOf(id: string) {
    const { rows } = await db.pool.query<{
      attempts: number;
      error: string | null;
      sent_at: Date | null;
      dead_lettered_at: Date | null;
      backing_off: boolean;
    }>(
      `SELECT attempts, error, sent_at, dead_lettered_at, next_attempt_at > now() AS backing_off
       FROM outbox WHERE id = $1`,
      [id],
    );
    return rows[0]!;
  }

  it.each(cases)('$name', async (c) => {
    const invoiceTopic = c.invoiceTopic({ small });
    const topics: TopicMap = (type) =>
      type === 'order' ? orders : type === 'invoice' ? invoiceTopic : undefined;
    const [poison, heldBack, a1, a2] = await h.append([
      invoice(1, c.payload),
      invoice(2, { total: 1 }),
      orderEvent('A', 1),
      orderEvent('A', 2),
    ]);
    const registry = new Registry();
    const metrics = new OutboxMetrics(registry, db.pool);
    // A backoff long enough to observe on the row, short enough to reach the cap quickly.
    const relay = await h.relay({
      topics,
      metrics,
      maxAttempts: MAX_ATTEMPTS,
      retryBaseSeconds: 1,
      retryMaxSeconds: 1,
      // A refusal inside a multi-topic batch breaks the idempotent producer's sequence
      // numbers for the partitions the broker did write: without a fresh producer every
      // later tick fails with OUT_OF_ORDER_SEQUENCE_NUMBER and nothing moves.
      renewProducer: async (broken) => {
        await broken.disconnect();
        return h.producer();
      },
    });

    await relay.tick();
    const first = await rowOf(poison!);
    expect(first).toMatchObject({ attempts: 1, sent_at: null, dead_lettered_at: null });
    expect(first.error).toMatch(c.error);
    expect(first.backing_off).toBe(true);
    // The other aggregate went through on the first tick; the poison's own later event waits.
    expect((await rowOf(a1!)).sent_at).toBeInstanceOf(Date);
    expect((await rowOf(a2!)).sent_at).toBeInstanceOf(Date);
    expect((await rowOf(heldBack!)).sent_at).toBeNull();

    await waitFor(
      async () => {
        await relay.tick();
        return (await rowOf(poison!)).dead_lettered_at !== null;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'the poison event to be dead-lettered' },
    );
    const dead = await rowOf(poison!);
    expect(dead.attempts).toBe(MAX_ATTEMPTS);
    expect(dead.error).toMatch(c.error);
    // Dead-lettered: never claimed again, and its aggregate's later event stays behind it.
    expect(await relay.tick()).toMatchObject({ claimed: 0 });
    expect(await rowOf(heldBack!)).toMatchObject({ sent_at: null, attempts: 0 });

    await new Promise((resolve) => setTimeout(resolve, 150)); // the gauges cache 100 ms
    const text = await registry.metrics();
    expect(text).toMatch(
      new RegExp(`outbox_publish_errors_total\\{kind="row"\\} ${String(MAX_ATTEMPTS)}\\b`),
    );
    expect(text).toMatch(/outbox_dead_lettered 1\b/);
    expect(text).toMatch(/outbox_pending 1\b/); // the held-back event
    expect(text).toMatch(
      new RegExp(`outbox_published_total\\{topic="${orders.replace(/\./g, '\\.')}"\\} 2\\b`),
    );

    const received = await readTopic(kafka, orders, 2);
    expect(new Set(received.map((m) => m.headers.event_id))).toEqual(new Set([a1, a2]));
  });
});

describe('relay: a producer whose idempotence state broke is replaced', () => {
  const kafka = testKafka();
  let db: TestDb;
  let h: RelayHarness;

  beforeEach(async () => {
    db = await createTestDb();
    h = new RelayHarness(db, kafka);
  });
  afterEach(async () => {
    await h.close();
    await db.close();
  });

  it('OUT_OF_ORDER_SEQUENCE_NUMBER: the tick fails, the producer is renewed, the next tick publishes', async () => {
    const { orders, small } = await createTopics(kafka, ['orders', 'small'], {
      configEntries: [{ name: 'max.message.bytes', value: String(SMALL_TOPIC_BYTES) }],
    });
    // Break a producer the way a partial refusal does: one request, two partitions, the
    // broker writes one and refuses the other; kafkajs rolls both sequences back.
    const broken = await h.producer();
    await expect(
      broken.sendBatch({
        acks: -1,
        topicMessages: [
          { topic: small!, messages: [{ key: 'big', value: 'x'.repeat(SMALL_TOPIC_BYTES * 2) }] },
          { topic: orders!, messages: [{ key: 'A', value: '{}' }] },
        ],
      }),
    ).rejects.toThrow(/larger than the max message size/);

    const ids = await h.append([orderEvent('A', 1), orderEvent('A', 2)]);
    const renewed: string[] = [];
    const relay = await h.relay({
      topics: { order: orders! },
      producer: broken,
      renewProducer: async (old) => {
        renewed.push(old === broken ? 'broken' : 'other');
        await old.disconnect();
        return h.producer();
      },
    });
    // Two rows where the broker holds one message at sequence 0: out of order.
    await expect(relay.tick()).rejects.toThrow(/out of order sequence/i);
    expect(renewed).toEqual(['broken']);
    expect(await h.pending()).toBe(2);
    expect(await relay.tick()).toMatchObject({ claimed: 2, sent: 2 });
    const received = await readTopic(kafka, orders!, 3);
    // The message of the "failed" request is there: the broker had written it.
    expect(received.filter((m) => m.headers.event_id === undefined)).toHaveLength(1);
    expect(new Set(received.flatMap((m) => m.headers.event_id ?? []))).toEqual(new Set(ids));
  });
});
