import { FailurePoint } from '@outbox/lab';
import type { Kafka } from 'kafkajs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { createTestDb, type TestDb } from './support/db.ts';
import { createTopicPrefix, readTopic, testKafka } from '@outbox/testkit';

describe('naive mode (the dual write kept for teaching)', () => {
  let db: TestDb;
  let app: TestApp;
  let kafka: Kafka;
  let topic: string;

  beforeEach(async () => {
    db = await createTestDb();
    kafka = testKafka();
    const created = await createTopicPrefix(kafka);
    topic = created.topic;
    app = await startTestApp(db, created.prefix, { DEFAULT_MODE: 'naive' });
  });
  afterEach(async () => {
    await app.close();
    await db.close();
  });

  it('commits the order, then produces the relay-shaped message (no outbox row)', async () => {
    const res = await app.request('/orders', {
      json: { userId: 9, sku: 'sku-2', quantity: 3 },
      headers: { 'x-correlation-id': 'corr-naive' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ mode: 'naive', eventId: expect.stringMatching(/^naive-/) });
    const orderId = res.body.orderId as string;
    expect(await db.counts()).toEqual({ orders: 1, outbox: 0, idempotency_keys: 0 });

    const pay = await app.request(`/orders/${orderId}/pay`, { method: 'POST' });
    expect(pay.body).toMatchObject({ mode: 'naive', seq: 2 });

    const received = await readTopic(kafka, topic, { until: (r) => r.length >= 2 });
    expect(received).toHaveLength(2);
    const [created, paid] = received;
    expect(created?.key).toBe(orderId);
    expect(created?.headers).toEqual({
      correlationId: 'corr-naive',
      event_id: res.body.eventId,
      event_type: 'OrderCreated',
      event_version: '2',
      aggregate_type: 'order',
      aggregate_id: orderId,
    });
    expect(JSON.parse(created?.value ?? '')).toEqual({
      orderId,
      userId: 9,
      sku: 'sku-2',
      quantity: 3,
      seq: 1,
      source: 'api',
    });
    expect(paid?.headers).toMatchObject({ event_type: 'OrderPaid', event_id: pay.body.eventId });
  });

  it('network drop after commit: 502, the order committed, its event never sent; then back', async () => {
    await app.failurePoints.arm(FailurePoint.naiveNetworkDropAfterCommit, { mode: 'once' });
    const started = Date.now();
    const lost = await app.request('/orders', { json: { userId: 1, sku: 'sku-1', quantity: 1 } });
    const elapsed = Date.now() - started;
    expect(lost.status).toBe(502);
    expect(lost.body).toEqual({ error: 'event not published', orderId: expect.any(String) });
    expect(elapsed).toBeLessThan(2_000);
    const lostId = lost.body.orderId as string;
    const { rows } = await db.pool.query('SELECT id, mode FROM orders');
    expect(rows).toEqual([{ id: lostId, mode: 'naive' }]);
    expect(app.kafka.network.isDown).toBe(false);

    // The network is back: the next order publishes normally.
    const next = await app.request('/orders', { json: { userId: 2, sku: 'sku-1', quantity: 1 } });
    expect(next.status).toBe(201);

    const received = await readTopic(kafka, topic, {
      until: (r) => r.some((m) => m.key === next.body.orderId),
      settleMs: 3_000,
    });
    expect(received.map((m) => m.key)).toEqual([next.body.orderId]);
    expect(received.some((m) => m.key === lostId)).toBe(false);

    const metrics = await fetch(`${app.url}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^naive_publish_failures_total 1$/m);
    expect(metrics).toMatch(/^orders_created_total\{mode="naive"\} 2$/m);
  });

  it('a 502 is what a retry with the same Idempotency-Key gets too', async () => {
    await app.failurePoints.arm(FailurePoint.naiveNetworkDropAfterCommit, { mode: 'once' });
    const headers = { 'idempotency-key': 'naive-key' };
    const body = { userId: 1, sku: 'sku-1', quantity: 1 };
    const first = await app.request('/orders', { json: body, headers });
    const retry = await app.request('/orders', { json: body, headers });
    expect(first.status).toBe(502);
    expect(retry.status).toBe(502);
    expect(retry.body).toEqual(first.body);
    expect(await db.counts()).toEqual({ orders: 1, outbox: 0, idempotency_keys: 1 });
  });
});
