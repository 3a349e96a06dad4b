import { describe, expect, it } from 'vitest';
import { readTopic, startService, testKafka, waitFor } from '@outbox/testkit';
import {
  consumerEnv,
  deliveries,
  orderCreated,
  relayMessage,
  reservations,
} from './support/events.ts';
import { useConsumerFixture } from './support/fixture.ts';

/**
 * One transaction and one offset commit per message held the consumer to ~300 events/s
 * on a quiet machine and ~156/s inside the 30-minute soak, under the ~170/s that 100
 * orders/s publish: its lag only grew. A backlog is applied in chunks instead, one
 * PostgreSQL transaction each. The rows of one transaction share their xmin, which is
 * how this test counts transactions without timing anything.
 */
describe('inventory-consumer: a backlog is applied in chunks, one transaction each', () => {
  const kafka = testKafka();
  const fx = useConsumerFixture(kafka, async (opened) => {
    await opened.db.pool.query('UPDATE inventory SET available = 1000000');
  });

  it('300 events and a poison one among them: each good event applied once, the poison dead-lettered, in few transactions', async () => {
    const good = Array.from({ length: 300 }, (_, i) =>
      orderCreated({ sku: `sku-${(i % 3) + 1}`, quantity: 1 }),
    );
    // Unreadable payload, keyed like the 150th event so that it lands amid a chunk.
    const poison = { ...relayMessage('OrderCreated', { orderId: 'x' }), key: good[150]!.key };
    await fx.producer.send({
      topic: fx.topic,
      acks: -1,
      messages: [...good.slice(0, 150), poison, ...good.slice(150)],
    });

    const consumer = await startService(consumerEnv(fx.db, fx.prefix));
    fx.procs.push(consumer);
    await waitFor(async () => (await deliveries(fx.db)).length === 300, {
      what: '300 deliveries',
      timeoutMs: 60_000,
    });

    const rows = await deliveries(fx.db);
    expect(rows.every((r) => r.outcome === 'processed' && !r.fifo_violation)).toBe(true);
    expect(new Set(rows.map((r) => r.event_id)).size).toBe(300);
    const { rows: stock } = await fx.db.pool.query<{ reserved: number }>(
      'SELECT sum(reserved)::int AS reserved FROM inventory',
    );
    expect(stock[0]!.reserved).toBe(300);
    const dead = await readTopic(kafka, fx.deadLetter, 1);
    expect(dead.map((m) => m.headers.dlq_reason)).toEqual(['invalid_payload']);

    const { rows: tx } = await fx.db.pool.query<{ transactions: number }>(
      'SELECT count(DISTINCT xmin::text)::int AS transactions FROM consumer_deliveries',
    );
    // 3 partitions, ~100 events each: a handful of chunks. Per message it was 300.
    expect(tx[0]!.transactions).toBeLessThanOrEqual(30);
  });

  const BLOCKED = '00000000-0000-4000-8000-00000000b10c';
  it('a message that fails where its chunk is written together (its delivery row) is dead-lettered alone, the rest of the chunk applied', async () => {
    // A rule of the delivery table, not of the effect: the chunk's delivery rows are
    // written in one statement, so the failure names no message. The consumer must
    // still find the one to blame and apply all the others.
    await fx.db.pool.query(
      `ALTER TABLE consumer_deliveries ADD CONSTRAINT no_blocked_orders CHECK (aggregate_id <> '${BLOCKED}')`,
    );
    const good = Array.from({ length: 60 }, () => orderCreated({ quantity: 1 }));
    const blocked = orderCreated({ orderId: BLOCKED, quantity: 1 });
    // One key: one partition, one chunk, the blocked event in its middle.
    const messages = [...good.slice(0, 30), blocked, ...good.slice(30)].map((m) => ({
      ...m,
      key: 'one-partition',
    }));
    await fx.producer.send({ topic: fx.topic, acks: -1, messages });

    const consumer = await startService(consumerEnv(fx.db, fx.prefix));
    fx.procs.push(consumer);
    await waitFor(async () => (await deliveries(fx.db)).length === 60, {
      what: '60 deliveries',
      timeoutMs: 60_000,
    });
    const dead = await readTopic(kafka, fx.deadLetter, 1);
    expect(dead.map((m) => [m.key, m.headers.dlq_reason])).toEqual([
      ['one-partition', 'handler_error'],
    ]);
    expect(dead[0]!.headers.dlq_error).toMatch(/no_blocked_orders/);
    expect(await reservations(fx.db, BLOCKED)).toEqual([]);
    const rows = await deliveries(fx.db);
    expect(rows.every((r) => r.outcome === 'processed')).toBe(true);
    expect(new Set(rows.map((r) => r.event_id)).size).toBe(60);
    const { rows: stockRows } = await fx.db.pool.query<{ reserved: number }>(
      'SELECT sum(reserved)::int AS reserved FROM inventory',
    );
    expect(stockRows[0]!.reserved).toBe(60);
  });
});
