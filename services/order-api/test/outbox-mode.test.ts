import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { createTestDb, type TestDb } from './support/db.ts';
import { createTopicPrefix, testKafka } from '@outbox/testkit';
import { writePaths } from '../src/config.ts';

// Both write paths (WRITE_PATH): one statement, and BEGIN … COMMIT; same answers.
describe.each(writePaths)('POST /orders in outbox mode, WRITE_PATH=%s', (writePath) => {
  let db: TestDb;
  let app: TestApp;

  beforeEach(async () => {
    db = await createTestDb();
    const { prefix } = await createTopicPrefix(testKafka());
    app = await startTestApp(db, prefix, { WRITE_PATH: writePath });
  });
  afterEach(async () => {
    await app.close();
    await db.close();
  });

  it('writes the order and exactly one OrderCreated v2 outbox row', async () => {
    const res = await app.request('/orders', {
      json: { userId: 7, sku: 'sku-1', quantity: 2 },
      headers: { 'x-correlation-id': 'corr-1', traceparent: '00-abc-def-01' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ mode: 'outbox', orderId: expect.any(String) });
    const orderId = res.body.orderId as string;
    expect(res.body.eventId).toEqual(expect.any(String));
    expect(res.headers.get('x-correlation-id')).toBe('corr-1');

    const orders = await db.pool.query('SELECT * FROM orders');
    expect(orders.rows).toEqual([
      expect.objectContaining({
        id: orderId,
        user_id: 7,
        sku: 'sku-1',
        quantity: 2,
        status: 'created',
        seq: 1,
        mode: 'outbox',
      }),
    ]);
    const outbox = await db.pool.query('SELECT * FROM outbox');
    expect(outbox.rows).toHaveLength(1);
    expect(outbox.rows[0]).toMatchObject({
      id: res.body.eventId,
      aggregate_type: 'order',
      aggregate_id: orderId,
      event_type: 'OrderCreated',
      event_version: 2,
      payload: { orderId, userId: 7, sku: 'sku-1', quantity: 2, seq: 1, source: 'api' },
      headers: { correlationId: 'corr-1', traceparent: '00-abc-def-01' },
      sent_at: null,
    });
    // One transaction: the order and its event carry the same transaction id.
    const xmin = await db.pool.query<{ same: boolean }>(
      `SELECT (SELECT xmin::text FROM orders) = (SELECT xmin::text FROM outbox) AS same`,
    );
    expect(xmin.rows[0]?.same).toBe(true);
  });

  it('answers 422 for an unknown sku and writes neither the order nor an event', async () => {
    const res = await app.request('/orders', { json: { userId: 7, sku: 'no-such', quantity: 1 } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'unknown sku' });
    const { rows } = await db.pool.query<{ n: number }>(
      'SELECT (SELECT count(*) FROM orders) + (SELECT count(*) FROM outbox) AS n',
    );
    expect(Number(rows[0]?.n)).toBe(0);
  });

  it('marks traffic orders with source "traffic" and generates a correlation id', async () => {
    const res = await app.request('/orders', {
      json: { userId: 1, sku: 'sku-2', quantity: 1 },
      headers: { 'x-source': 'traffic' },
    });
    expect(res.status).toBe(201);
    const { rows } = await db.pool.query('SELECT payload, headers FROM outbox');
    expect(rows[0].payload.source).toBe('traffic');
    expect(rows[0].headers.correlationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('x-correlation-id')).toBe(rows[0].headers.correlationId);
  });

  it('takes the default mode from demo_settings, overridden by ?mode= and the body', async () => {
    await db.pool.query(
      `INSERT INTO demo_settings (key, value) VALUES ('order_mode', '"naive"'::jsonb)`,
    );
    const fromSetting = await app.request('/orders', {
      json: { userId: 1, sku: 'sku-1', quantity: 1 },
    });
    expect(fromSetting.body.mode).toBe('naive');
    const fromQuery = await app.request('/orders?mode=outbox', {
      json: { userId: 1, sku: 'sku-1', quantity: 1 },
    });
    expect(fromQuery.body.mode).toBe('outbox');
    const fromBody = await app.request('/orders?mode=naive', {
      json: { userId: 1, sku: 'sku-1', quantity: 1, mode: 'outbox' },
    });
    expect(fromBody.body.mode).toBe('outbox');
    const { rows } = await db.pool.query('SELECT mode, count(*)::int AS n FROM orders GROUP BY 1');
    expect(Object.fromEntries(rows.map((r) => [r.mode, r.n]))).toEqual({ naive: 1, outbox: 2 });
  });

  it('GET /orders/:id shows the order and its outbox events', async () => {
    const created = await app.request('/orders', {
      json: { userId: 3, sku: 'sku-3', quantity: 4 },
    });
    const orderId = created.body.orderId as string;
    const res = await app.request(`/orders/${orderId}`);
    expect(res.status).toBe(200);
    expect(res.body.order).toMatchObject({ id: orderId, userId: 3, status: 'created', seq: 1 });
    expect(res.body.events).toEqual([
      expect.objectContaining({
        id: created.body.eventId,
        event_type: 'OrderCreated',
        sent_at: null,
        attempts: 0,
      }),
    ]);
    expect(res.body.deliveries).toEqual([]);
    expect(res.body.reservations).toEqual([]);
  });
});
