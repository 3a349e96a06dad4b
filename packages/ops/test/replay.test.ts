import { randomBytes } from 'node:crypto';
import { handleOnce, OutboxRelay, withTransaction } from '@outbox/core';
import type { Consumer, Producer } from 'kafkajs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replay } from '../src/index.ts';
import {
  createTestDb,
  decodeHeaders,
  readTopic,
  type TestDb,
  testKafka,
  waitFor,
} from '@outbox/testkit';
import { appendEvents } from './support/db.ts';
import { createTopic, idempotentProducer } from './support/kafka.ts';

/**
 * A consumer that lost data: its effects and inbox markers of some events are gone
 * (restored from an older backup). A replay of the range re-publishes every event;
 * the inbox skips what survived and lets the lost ones be applied again, once.
 */
describe('replay of a range of sent events', () => {
  const kafka = testKafka();
  let db: TestDb;
  let producer: Producer;
  let topic: string;
  let consumer: Consumer | undefined;
  let relay: OutboxRelay | undefined;
  const outcomes: { eventId: string; status: string; replayed: boolean }[] = [];

  beforeEach(async () => {
    db = await createTestDb({ max: 8 });
    topic = await createTopic(kafka, 'orders');
    producer = await idempotentProducer(kafka);
    await db.pool.query(
      'CREATE TABLE billed (n BIGSERIAL, event_id TEXT, aggregate_id TEXT, seq INT)',
    );
    outcomes.length = 0;
  });
  afterEach(async () => {
    await consumer?.disconnect();
    consumer = undefined;
    await relay?.stop();
    await producer.disconnect();
    await db.close();
  });

  /** The consumer with the inbox: one transaction per event, marker + effect. */
  async function startConsumer(): Promise<void> {
    consumer = kafka.consumer({ groupId: `billing-${randomBytes(4).toString('hex')}` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        const headers = decodeHeaders(message.headers);
        const eventId = headers.event_id!;
        const { seq } = JSON.parse(message.value!.toString()) as { seq: number };
        const outcome = await withTransaction(db.pool, (c) =>
          handleOnce(
            c,
            { consumer: 'billing', eventId, topic, partition, offset: message.offset },
            (tx) =>
              tx.query('INSERT INTO billed (event_id, aggregate_id, seq) VALUES ($1, $2, $3)', [
                eventId,
                headers.aggregate_id,
                seq,
              ]),
          ),
        );
        outcomes.push({ eventId, status: outcome.status, replayed: headers.replayed === 'true' });
      },
    });
  }

  async function billed(): Promise<{ event_id: string; n: number }[]> {
    const { rows } = await db.pool.query<{ event_id: string; n: number }>(
      'SELECT event_id, count(*)::int AS n FROM billed GROUP BY event_id ORDER BY event_id::bigint',
    );
    return rows;
  }

  it('re-publishes by id range in order; lost effects come back once, the rest are caught as duplicates', async () => {
    const a = await appendEvents(db, 'A', 4);
    const b = await appendEvents(db, 'B', 4);
    relay = new OutboxRelay({ pool: db.pool, producer, topics: { order: topic } });
    await relay.tick();
    await startConsumer();
    await waitFor(() => outcomes.length === 8, { what: 'first delivery' });

    // The consumer loses A's last three effects and their markers.
    const lost = a.slice(1);
    await db.pool.query('DELETE FROM billed WHERE event_id = ANY($1)', [lost]);
    await db.pool.query("DELETE FROM inbox WHERE consumer = 'billing' AND event_id = ANY($1)", [
      lost,
    ]);

    const report = await replay({
      pool: db.pool,
      producer,
      range: { fromId: a[0], toId: b.at(-1) },
    });
    expect(report).toMatchObject({
      published: 8,
      firstId: a[0],
      lastId: b.at(-1),
      skippedUnsent: 0,
    });
    expect(report.topics).toEqual({ [topic]: 8 });

    await waitFor(() => outcomes.length === 16, { what: 'the replayed events' });
    const replayed = outcomes.slice(8);
    expect(replayed.every((o) => o.replayed)).toBe(true);
    expect(
      replayed
        .filter((o) => o.status === 'processed')
        .map((o) => o.eventId)
        .sort(),
    ).toEqual([...lost].sort());
    expect(replayed.filter((o) => o.status === 'duplicate')).toHaveLength(5);
    // Exactly once each, whatever was lost.
    expect(await billed()).toEqual([...a, ...b].map((id) => ({ event_id: id, n: 1 })));
    const order = await db.pool.query<{ seq: number }>(
      "SELECT seq FROM billed WHERE aggregate_id = 'A' ORDER BY n",
    );
    expect(order.rows.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
  });

  it('selects by time and aggregate, leaves pending events to the relay, and a dry run sends nothing', async () => {
    const old = await appendEvents(db, 'A', 2);
    const recent = await appendEvents(db, 'B', 2);
    await appendEvents(db, 'C', 1); // another aggregate: not selected
    relay = new OutboxRelay({ pool: db.pool, producer, topics: { order: topic } });
    await relay.tick();
    await db.pool.query(
      "UPDATE outbox SET created_at = now() - interval '2 hours' WHERE id = ANY($1)",
      [old],
    );
    await appendEvents(db, 'B', 1); // pending: the relay's, not replayed

    const since = new Date(Date.now() - 3600_000);
    const dry = await replay({
      pool: db.pool,
      producer,
      range: { since, aggregateId: 'B' },
      dryRun: true,
    });
    expect(dry).toMatchObject({
      published: 2,
      skippedUnsent: 1,
      firstId: recent[0],
      lastId: recent[1],
    });

    const replayTopic = await createTopic(kafka, 'replay');
    const real = await replay({
      pool: db.pool,
      producer,
      range: { since, aggregateId: 'B' },
      topic: replayTopic,
      batchSize: 1,
    });
    expect(real).toMatchObject({ published: 2, topics: { [replayTopic]: 2 } });
    const received = await readTopic(kafka, replayTopic, 2);
    expect(received.map((m) => m.headers.event_id)).toEqual(recent);
    expect(received.every((m) => m.key === 'B' && m.headers.replayed === 'true')).toBe(true);

    await expect(replay({ pool: db.pool, producer, range: {} })).rejects.toThrow(/needs a range/);
  });
});
