import { FailurePoint, FailurePoints } from '@outbox/lab';
import { describe, expect, it } from 'vitest';
import { startService, testKafka, waitFor } from '@outbox/testkit';
import {
  consumerEnv,
  deliveries,
  orderCreated,
  produce,
  reservations,
  stock,
} from './support/events.ts';
import { useConsumerFixture } from './support/fixture.ts';

const orderIdOf = (m: { value: unknown }) =>
  (JSON.parse(String(m.value)) as { orderId: string }).orderId;

describe('inventory-consumer: the inbox against redelivery', () => {
  const kafka = testKafka();
  const fx = useConsumerFixture(kafka);

  it('the same event delivered twice is applied once; the second is recorded as duplicate', async () => {
    const consumer = await startService(consumerEnv(fx.db, fx.prefix));
    fx.procs.push(consumer);
    const event = orderCreated({ quantity: 2 });
    await produce(fx.producer, fx.topic, [event, event]);
    await waitFor(async () => (await deliveries(fx.db)).length === 2, { what: '2 deliveries' });

    expect((await deliveries(fx.db)).map((d) => [d.outcome, d.fifo_violation])).toEqual([
      ['processed', false],
      ['duplicate', false],
    ]);
    expect(await reservations(fx.db, orderIdOf(event))).toHaveLength(1);
    expect(await stock(fx.db, 'sku-1')).toEqual({ available: 98, reserved: 2 });
    const metrics = await (await fetch(`${consumer.url}/metrics`)).text();
    expect(metrics).toMatch(/consumer_duplicates_total 1/);
  });

  it('consumer.inbox_off: the same event twice reserves twice (the lesson)', async () => {
    await new FailurePoints(fx.db.pool).arm(FailurePoint.consumerInboxOff, { mode: 'on' });
    const consumer = await startService(consumerEnv(fx.db, fx.prefix));
    fx.procs.push(consumer);
    const event = orderCreated({ quantity: 2 });
    await produce(fx.producer, fx.topic, [event, event]);
    await waitFor(async () => (await deliveries(fx.db)).length === 2, { what: '2 deliveries' });

    expect((await deliveries(fx.db)).map((d) => d.outcome)).toEqual(['processed', 'reprocessed']);
    expect(await reservations(fx.db, orderIdOf(event))).toHaveLength(2);
    expect(await stock(fx.db, 'sku-1')).toEqual({ available: 96, reserved: 4 });
    const metrics = await (await fetch(`${consumer.url}/metrics`)).text();
    expect(metrics).toMatch(/consumer_reprocessed_total 1/);

    // Switched back on (no restart): the markers written meanwhile still deduplicate.
    await new FailurePoints(fx.db.pool).arm(FailurePoint.consumerInboxOff, { mode: 'off' });
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // > the cache's backstop refresh
    await produce(fx.producer, fx.topic, [event]);
    await waitFor(async () => (await deliveries(fx.db)).length === 3, { what: '3rd delivery' });
    expect((await deliveries(fx.db))[2]?.outcome).toBe('duplicate');
    expect(await reservations(fx.db, orderIdOf(event))).toHaveLength(2);
  });

  it('consumer.crash_before_offset_commit: killed after COMMIT; the redelivery is caught as duplicate', async () => {
    await new FailurePoints(fx.db.pool).arm(FailurePoint.consumerCrashBeforeOffsetCommit, {
      mode: 'once',
    });
    const env = consumerEnv(fx.db, fx.prefix);
    const first = await startService(env);
    fx.procs.push(first);
    const event = orderCreated({ quantity: 1 });
    await produce(fx.producer, fx.topic, [event]);
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // The effect committed before the death.
    expect(await reservations(fx.db, orderIdOf(event))).toHaveLength(1);

    const second = await startService(env);
    fx.procs.push(second);
    await waitFor(async () => (await deliveries(fx.db)).length === 2, {
      what: 'the redelivery',
      timeoutMs: 60_000,
    });
    expect((await deliveries(fx.db)).map((d) => d.outcome)).toEqual(['processed', 'duplicate']);
    expect(await reservations(fx.db, orderIdOf(event))).toHaveLength(1);
    expect(await stock(fx.db, 'sku-1')).toEqual({ available: 99, reserved: 1 });
  });
});
