import { randomUUID } from 'node:crypto';
import type { Message } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { readTopic, startService, testKafka, waitFor } from '@outbox/testkit';
import {
  consumerEnv,
  deliveries,
  orderCreated,
  produce,
  relayMessage,
  reservations,
} from './support/events.ts';
import { useConsumerFixture } from './support/fixture.ts';

describe('inventory-consumer: poison messages and FIFO', () => {
  const kafka = testKafka();
  const fx = useConsumerFixture(kafka);

  it('dead-letters what it cannot read, with the reason, and goes on with the next message', async () => {
    const consumer = await startService(consumerEnv(fx.db, fx.prefix));
    fx.procs.push(consumer);
    const orderId = randomUUID();
    const key = orderId;
    const valid = orderCreated({ orderId });
    const noEventId: Message = { ...valid, headers: { ...valid.headers, event_id: '' } };
    const invalidJson: Message = {
      ...relayMessage('OrderCreated', { orderId }),
      value: '{not json',
    };
    const unknownType = relayMessage('OrderShipped', { orderId, seq: 2 });
    const invalidPayload = relayMessage('OrderCreated', { orderId, seq: 1, quantity: -1 });
    // Same key: one partition, so "after them" is a real order.
    await produce(
      fx.producer,
      fx.topic,
      [noEventId, invalidJson, unknownType, invalidPayload, valid].map((m) => ({ ...m, key })),
    );

    await waitFor(async () => (await deliveries(fx.db)).length === 1, {
      what: 'the valid message',
    });
    expect(await reservations(fx.db, orderId)).toHaveLength(1);

    const parked = await readTopic(kafka, fx.deadLetter, { until: (r) => r.length >= 4 });
    expect(parked.map((m) => m.headers.dlq_reason)).toEqual([
      'missing_event_id',
      'invalid_json',
      'unknown_event_type',
      'invalid_payload',
    ]);
    expect(parked[1]).toMatchObject({
      key,
      value: '{not json',
      headers: {
        dlq_source_topic: fx.topic,
        dlq_source_partition: expect.any(String),
        dlq_source_offset: '1',
      },
    });
    expect(parked[2]?.headers.event_type).toBe('OrderShipped'); // original headers kept

    const { rows } = await fx.db.pool.query<{ reason: string; kafka_offset: string }>(
      'SELECT reason, kafka_offset FROM consumer_dead_letters ORDER BY kafka_offset',
    );
    expect(rows.map((r) => [r.kafka_offset, r.reason.split(':')[0]])).toEqual([
      ['0', 'missing_event_id'],
      ['1', 'invalid_json'],
      ['2', 'unknown_event_type'],
      ['3', 'invalid_payload'],
    ]);
    const metrics = await (await fetch(`${consumer.url}/metrics`)).text();
    expect(metrics).toMatch(/consumer_dead_lettered_total\{reason="invalid_json"\} 1/);
    expect(metrics).toMatch(/consumer_processed_total 1/);
  });

  it('flags a FIFO reorder: seq 2 delivered before seq 1 of the same aggregate', async () => {
    const consumer = await startService(consumerEnv(fx.db, fx.prefix));
    fx.procs.push(consumer);
    const orderId = randomUUID();
    const seq1 = orderCreated({ orderId });
    const seq2 = relayMessage('OrderPaid', { orderId, seq: 2, paidAt: new Date().toISOString() });
    const seq3 = relayMessage('OrderCancelled', { orderId, seq: 3 });
    await produce(fx.producer, fx.topic, [seq2, seq1, seq3]);

    await waitFor(async () => (await deliveries(fx.db)).length === 3, { what: '3 deliveries' });
    // seq 2 first is a gap (1 is missing), seq 1 after it a reorder, seq 3 is in step again.
    expect((await deliveries(fx.db)).map((d) => [d.seq, d.outcome, d.fifo_violation])).toEqual([
      [2, 'processed', true],
      [1, 'processed', true],
      [3, 'processed', false],
    ]);
    const { rows } = await fx.db.pool.query(
      'SELECT last_seq FROM consumer_aggregate_seq WHERE aggregate_id = $1',
      [orderId],
    );
    expect(rows).toEqual([{ last_seq: 3 }]);
    const metrics = await (await fetch(`${consumer.url}/metrics`)).text();
    expect(metrics).toMatch(/consumer_fifo_violations_total 2/);
  });
});
