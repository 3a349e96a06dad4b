import { describe, expect, it } from 'vitest';
import { readTopic, startService, testKafka, waitFor } from '@outbox/testkit';
import {
  consumerEnv,
  deliveries,
  orderCreated,
  produce,
  reservations,
  stock,
} from './support/events.ts';
import { useConsumerFixture } from './support/fixture.ts';

/**
 * A well-formed event whose handler throws: here a business rule the schema enforces
 * and the handler does not know about (a CHECK constraint added after the fact), the
 * kind of error retrying can never fix. It must go to the dead-letter topic with the
 * reason, leave no trace of its effect, and not stop the partition.
 */
describe('inventory-consumer: a handler that throws', () => {
  const kafka = testKafka();
  const fx = useConsumerFixture(kafka, async (opened) => {
    await opened.db.pool.query(
      'ALTER TABLE reservations ADD CONSTRAINT reservations_at_most_10 CHECK (quantity <= 10)',
    );
  });

  it('is dead-lettered with its error, rolled back whole, and the next message is applied', async () => {
    const consumer = await startService(consumerEnv(fx.db, fx.prefix));
    fx.procs.push(consumer);
    const before = await stock(fx.db, 'sku-1');
    const refused = orderCreated({ quantity: 20 });
    const accepted = orderCreated({ quantity: 2 });
    // Same key: one partition, so "the next message" is really behind the bad one.
    await produce(
      fx.producer,
      fx.topic,
      [refused, accepted].map((m) => ({ ...m, key: 'same-key' })),
    );

    await waitFor(async () => (await deliveries(fx.db)).length === 1, { what: 'the next message' });
    const refusedId = JSON.parse(String(refused.value)) as { orderId: string };
    const acceptedId = JSON.parse(String(accepted.value)) as { orderId: string };
    expect(await reservations(fx.db, acceptedId.orderId)).toHaveLength(1);
    expect(await stock(fx.db, 'sku-1')).toEqual({
      available: before.available - 2,
      reserved: before.reserved + 2,
    });

    // Nothing of the refused event stayed: stock moved back, no reservation, no inbox marker.
    expect(await reservations(fx.db, refusedId.orderId)).toEqual([]);
    const inbox = await fx.db.pool.query('SELECT event_id FROM inbox');
    expect(inbox.rows).toEqual([{ event_id: String(accepted.headers!.event_id) }]);

    const parked = await readTopic(kafka, fx.deadLetter, { until: (r) => r.length >= 1 });
    expect(parked).toHaveLength(1);
    expect(parked[0]).toMatchObject({
      key: 'same-key',
      value: String(refused.value),
      headers: {
        event_id: String(refused.headers!.event_id),
        dlq_reason: 'handler_error',
        dlq_source_topic: fx.topic,
        dlq_source_offset: '0',
      },
    });
    expect(parked[0]!.headers.dlq_error).toMatch(/reservations_at_most_10/);
    const { rows } = await fx.db.pool.query<{ reason: string }>(
      'SELECT reason FROM consumer_dead_letters',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.reason).toMatch(/^handler_error: .*reservations_at_most_10/);

    const metrics = await (await fetch(`${consumer.url}/metrics`)).text();
    expect(metrics).toMatch(/consumer_dead_lettered_total\{reason="handler_error"\} 1/);
    expect(metrics).toMatch(/consumer_processed_total 1/);
    // Not mistaken for a transient database error: no retry loop on it.
    expect(metrics).toMatch(/consumer_transient_errors_total 0/);
  });
});
