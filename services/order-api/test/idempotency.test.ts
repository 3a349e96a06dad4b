import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { createTestDb, type TestDb } from './support/db.ts';
import { createTopicPrefix, testKafka } from '@outbox/testkit';

describe('Idempotency-Key', () => {
  let db: TestDb;
  let app: TestApp;
  const order = { userId: 5, sku: 'sku-1', quantity: 1 };

  beforeEach(async () => {
    db = await createTestDb();
    const { prefix } = await createTopicPrefix(testKafka());
    app = await startTestApp(db, prefix);
  });
  afterEach(async () => {
    await app.close();
    await db.close();
  });

  it('replays the first response for a retry: one order, one event', async () => {
    const headers = { 'idempotency-key': 'key-1' };
    const first = await app.request('/orders', { json: order, headers });
    const retry = await app.request('/orders', { json: order, headers });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await db.counts()).toEqual({ orders: 1, outbox: 1, idempotency_keys: 1 });
    const { rows } = await db.pool.query('SELECT status_code, response FROM idempotency_keys');
    expect(rows[0]).toEqual({ status_code: 201, response: first.body });
  });

  it('refuses the same key with a different body (422), writing nothing', async () => {
    const headers = { 'idempotency-key': 'key-2' };
    await app.request('/orders', { json: order, headers });
    const other = await app.request('/orders', { json: { ...order, quantity: 2 }, headers });
    expect(other.status).toBe(422);
    expect(other.body.error).toMatch(/different request/);
    expect(await db.counts()).toEqual({ orders: 1, outbox: 1, idempotency_keys: 1 });
  });

  it('concurrent requests with the same key create one order', async () => {
    const headers = { 'idempotency-key': 'key-3' };
    const results = await Promise.all(
      Array.from({ length: 8 }, () => app.request('/orders', { json: order, headers })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(new Set(results.map((r) => r.body.orderId)).size).toBe(1);
    expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(7);
    expect(await db.counts()).toEqual({ orders: 1, outbox: 1, idempotency_keys: 1 });
  });

  it('a key is per request: the same key on /pay is a different request (422)', async () => {
    const created = await app.request('/orders', {
      json: order,
      headers: { 'idempotency-key': 'key-4' },
    });
    const pay = await app.request(`/orders/${created.body.orderId as string}/pay`, {
      method: 'POST',
      headers: { 'idempotency-key': 'key-4' },
    });
    expect(pay.status).toBe(422);
    const payKey = { 'idempotency-key': 'key-5' };
    const path = `/orders/${created.body.orderId as string}/pay`;
    const paid = await app.request(path, { method: 'POST', headers: payKey });
    const again = await app.request(path, { method: 'POST', headers: payKey });
    expect(paid.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(paid.body);
    const { rows } = await db.pool.query('SELECT seq FROM orders');
    expect(rows[0].seq).toBe(2);
    expect(await db.counts()).toEqual({ orders: 1, outbox: 2, idempotency_keys: 2 });
  });
});
