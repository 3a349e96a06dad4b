import { randomUUID } from 'node:crypto';
import { OutboxRelay, OutboxWriter, withTransaction } from '@outbox/core';
import { validateEvent } from '@outbox/lab';
import { describe, expect, it } from 'vitest';
import { startService, testKafka, waitFor } from '@outbox/testkit';
import {
  consumerEnv,
  deliveries,
  orderCreated,
  produce,
  relayMessage,
  reservations,
  stock,
} from './support/events.ts';
import { useConsumerFixture } from './support/fixture.ts';

describe('inventory-consumer process: applies order events', () => {
  const kafka = testKafka();
  const fx = useConsumerFixture(kafka);

  it('events relayed from the outbox reserve, pay and cancel; every delivery is recorded', async () => {
    const consumer = await startService(consumerEnv(fx.db, fx.prefix));
    fx.procs.push(consumer);
    // The real path: OutboxWriter in a business transaction, core's relay publishing it.
    const kept = randomUUID();
    const cancelled = randomUUID();
    const writer = new OutboxWriter({ validate: validateEvent });
    const created = (orderId: string, sku: string, quantity: number) => ({
      aggregateType: 'order',
      aggregateId: orderId,
      eventType: 'OrderCreated',
      payload: { orderId, userId: 1, sku, quantity, seq: 1, source: 'api' },
    });
    await withTransaction(fx.db.pool, (c) =>
      writer.appendBatch(c, [
        created(kept, 'sku-1', 3),
        created(cancelled, 'sku-2', 5),
        {
          aggregateType: 'order',
          aggregateId: kept,
          eventType: 'OrderPaid',
          payload: { orderId: kept, seq: 2, paidAt: new Date().toISOString() },
        },
        {
          aggregateType: 'order',
          aggregateId: cancelled,
          eventType: 'OrderCancelled',
          payload: { orderId: cancelled, seq: 2, reason: 'changed mind' },
        },
      ]),
    );
    const relay = new OutboxRelay({
      pool: fx.db.pool,
      producer: fx.producer,
      topics: { order: fx.topic },
    });
    expect(await relay.tick()).toMatchObject({ sent: 4 });

    await waitFor(async () => (await deliveries(fx.db)).length === 4, { what: '4 deliveries' });
    expect(await reservations(fx.db, kept)).toEqual([
      { sku: 'sku-1', quantity: 3, event_id: expect.any(String), released: false },
    ]);
    expect(await reservations(fx.db, cancelled)).toMatchObject([
      { sku: 'sku-2', quantity: 5, released: true },
    ]);
    expect(await stock(fx.db, 'sku-1')).toEqual({ available: 97, reserved: 3 });
    expect(await stock(fx.db, 'sku-2')).toEqual({ available: 100, reserved: 0 });
    const rows = await deliveries(fx.db);
    expect(rows.map((r) => [r.event_type, r.seq, r.outcome, r.fifo_violation]).sort()).toEqual([
      ['OrderCancelled', 2, 'processed', false],
      ['OrderCreated', 1, 'processed', false],
      ['OrderCreated', 1, 'processed', false],
      ['OrderPaid', 2, 'processed', false],
    ]);

    const health = await fetch(`${consumer.url}/healthz`);
    expect(health.status).toBe(200);
    const metrics = await (await fetch(`${consumer.url}/metrics`)).text();
    expect(metrics).toMatch(/consumer_processed_total 4/);
    expect(metrics).toMatch(/consumer_duplicates_total 0/);
    expect(metrics).toMatch(/consumer_dead_lettered_total\{reason="invalid_json"\} 0/);
  });

  it('upcasts a v1 OrderCreated (no source) and reads a v2 one', async () => {
    const consumer = await startService(consumerEnv(fx.db, fx.prefix));
    fx.procs.push(consumer);
    const v1 = randomUUID();
    const v2 = randomUUID();
    await produce(fx.producer, fx.topic, [
      relayMessage(
        'OrderCreated',
        { orderId: v1, userId: 1, sku: 'sku-3', quantity: 1, seq: 1 },
        { version: 1 },
      ),
      orderCreated({ orderId: v2, sku: 'sku-3', quantity: 4 }),
    ]);
    await waitFor(async () => (await deliveries(fx.db)).length === 2, { what: '2 deliveries' });
    expect(await reservations(fx.db, v1)).toMatchObject([{ sku: 'sku-3', quantity: 1 }]);
    expect(await reservations(fx.db, v2)).toMatchObject([{ sku: 'sku-3', quantity: 4 }]);
    expect(await stock(fx.db, 'sku-3')).toEqual({ available: 95, reserved: 5 });
    const upcast = consumer.lines.find((l) => l.aggregateId === v1 && l.msg === 'event processed');
    expect(upcast).toMatchObject({ eventType: 'OrderCreated', outcome: 'processed' });
  });

  it('never takes stock below zero: an unbacked reservation is recorded as released', async () => {
    const consumer = await startService(consumerEnv(fx.db, fx.prefix));
    fx.procs.push(consumer);
    const big = orderCreated({ sku: 'sku-1', quantity: 150 });
    await produce(fx.producer, fx.topic, [big]);
    await waitFor(async () => (await deliveries(fx.db)).length === 1, { what: 'delivery' });
    const orderId = JSON.parse(String(big.value)) as { orderId: string };
    expect(await reservations(fx.db, orderId.orderId)).toMatchObject([
      { quantity: 150, released: true },
    ]);
    expect(await stock(fx.db, 'sku-1')).toEqual({ available: 100, reserved: 0 });
  });

  it('SIGTERM: leaves the group and exits with code 0', async () => {
    const consumer = await startService(consumerEnv(fx.db, fx.prefix));
    fx.procs.push(consumer);
    expect(await consumer.stop()).toEqual({ code: 0, signal: null });
    expect(consumer.lines.some((l) => l.msg === 'stopped')).toBe(true);
  });
});
