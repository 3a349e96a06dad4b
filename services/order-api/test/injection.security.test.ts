import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { createTestDb, type TestDb } from './support/db.ts';
import { createTopicPrefix, testKafka } from '@outbox/testkit';

/**
 * SQL injection through every text the API accepts: body fields, the query string, the
 * path and the headers it stores. Each payload must be either refused (4xx) or stored
 * verbatim, never executed: the canary table survives, stock is untouched, and what
 * was stored reads back byte for byte. Every query in the service is parameterised;
 * this test is what keeps it so.
 */
const PAYLOADS = [
  "'; DROP TABLE canary; --",
  "' OR '1'='1",
  '1); DELETE FROM inventory; --',
  "x' UNION SELECT key FROM idempotency_keys --",
  '"; TRUNCATE canary; --',
  "$1; UPDATE inventory SET available = 0 WHERE sku = 'sku-1'; --",
  "\\'; DROP TABLE canary; --",
  "'||(SELECT pg_sleep(0))||'",
];

describe('SQL injection through every text field of order-api', () => {
  let db: TestDb;
  let app: TestApp;
  let stockBefore: unknown[];

  beforeAll(async () => {
    db = await createTestDb();
    const { prefix } = await createTopicPrefix(testKafka());
    app = await startTestApp(db, prefix);
    await db.pool.query('CREATE TABLE canary (id INT PRIMARY KEY)');
    await db.pool.query('INSERT INTO canary VALUES (1)');
    // Injection strings as real skus, so that the accepting path (order, outbox
    // payload, reservation later) carries them too, not only the refusing one.
    await db.pool.query('INSERT INTO inventory (sku, available) SELECT unnest($1::text[]), 50', [
      PAYLOADS,
    ]);
    stockBefore = (await db.pool.query('SELECT * FROM inventory ORDER BY sku')).rows;
  });
  afterAll(async () => {
    await app.close();
    await db.close();
  });

  async function intact(): Promise<void> {
    const canary = await db.pool.query('SELECT id FROM canary');
    expect(canary.rows).toEqual([{ id: 1 }]);
    expect((await db.pool.query('SELECT * FROM inventory ORDER BY sku')).rows).toEqual(stockBefore);
  }

  let created: string;
  beforeEach(async () => {
    const res = await app.request('/orders', { json: { userId: 1, sku: 'sku-1', quantity: 1 } });
    expect(res.status).toBe(201);
    created = res.body.orderId as string;
  });

  it.each(PAYLOADS)('sku %j: an order is created with the sku verbatim', async (payload) => {
    const res = await app.request('/orders', { json: { userId: 1, sku: payload, quantity: 1 } });
    expect(res.status).toBe(201);
    const id = res.body.orderId as string;
    const order = await db.pool.query('SELECT sku FROM orders WHERE id = $1', [id]);
    expect(order.rows).toEqual([{ sku: payload }]);
    const event = await db.pool.query(
      "SELECT payload->>'sku' AS sku FROM outbox WHERE aggregate_id = $1",
      [id],
    );
    expect(event.rows).toEqual([{ sku: payload }]);
    const journey = await app.request(`/orders/${id}`);
    expect(journey.body.order).toMatchObject({ sku: payload });
    await intact();
  });

  it.each(PAYLOADS)('unknown sku %j: 422 naming it, nothing written', async (payload) => {
    const sku = `${payload}-unknown`;
    const before = await db.counts();
    const res = await app.request('/orders', { json: { userId: 1, sku, quantity: 1 } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: 'unknown sku', details: { sku } });
    expect(await db.counts()).toEqual(before);
    await intact();
  });

  it.each(PAYLOADS)('mode %j in the body and the query: 400', async (payload) => {
    const body = await app.request('/orders', {
      json: { userId: 1, sku: 'sku-1', quantity: 1, mode: payload },
    });
    expect(body.status).toBe(400);
    const query = await app.request(`/orders?mode=${encodeURIComponent(payload)}`, {
      json: { userId: 1, sku: 'sku-1', quantity: 1 },
    });
    expect(query.status).toBe(400);
    await intact();
  });

  it.each(PAYLOADS)('order id %j in the path: 404 for GET, pay and cancel', async (payload) => {
    const path = `/orders/${encodeURIComponent(payload)}`;
    expect((await app.request(path)).status).toBe(404);
    expect((await app.request(`${path}/pay`, { method: 'POST' })).status).toBe(404);
    expect((await app.request(`${path}/cancel`, { method: 'POST' })).status).toBe(404);
    await intact();
  });

  it.each(PAYLOADS)('cancel reason %j: stored verbatim in the event', async (payload) => {
    const res = await app.request(`/orders/${created}/cancel`, { json: { reason: payload } });
    expect(res.status).toBe(200);
    const { rows } = await db.pool.query(
      "SELECT payload->>'reason' AS reason FROM outbox WHERE aggregate_id = $1 AND event_type = 'OrderCancelled'",
      [created],
    );
    expect(rows).toEqual([{ reason: payload }]);
    await intact();
  });

  it.each(PAYLOADS)(
    'Idempotency-Key, X-Correlation-Id, traceparent, X-Source %j: stored verbatim',
    async (payload) => {
      // A key is printable ASCII without spaces (a key with one is a 400, bad-input.test.ts);
      // SQL reads a comment as whitespace, so the injection stays one.
      const key = `k-${payload.replaceAll(' ', '/**/')}`;
      const headers = {
        'idempotency-key': key,
        'x-correlation-id': payload,
        traceparent: payload,
        'x-source': payload,
      };
      const first = await app.request('/orders', {
        json: { userId: 2, sku: 'sku-2', quantity: 1 },
        headers,
      });
      expect(first.status).toBe(201);
      const id = first.body.orderId as string;
      const retry = await app.request('/orders', {
        json: { userId: 2, sku: 'sku-2', quantity: 1 },
        headers,
      });
      expect(retry).toMatchObject({ status: 201, body: { orderId: id } });
      expect(retry.headers.get('idempotent-replayed')).toBe('true');

      const keys = await db.pool.query('SELECT key FROM idempotency_keys WHERE key = $1', [key]);
      expect(keys.rows).toHaveLength(1);
      const { rows } = await db.pool.query(
        "SELECT headers, payload->>'source' AS source FROM outbox WHERE aggregate_id = $1",
        [id],
      );
      expect(rows).toEqual([
        { headers: { correlationId: payload, traceparent: payload }, source: 'api' },
      ]);
      // The same key on pay: a different request, refused, the key untouched.
      const pay = await app.request(`/orders/${id}/pay`, { method: 'POST', headers });
      expect(pay.status).toBe(422);
      await intact();
    },
  );
});
