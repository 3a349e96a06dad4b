import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { createTestDb, type TestDb } from './support/db.ts';
import { createTopicPrefix, testKafka } from '@outbox/testkit';

describe('pay and cancel', () => {
  let db: TestDb;
  let app: TestApp;

  beforeEach(async () => {
    db = await createTestDb();
    const { prefix } = await createTopicPrefix(testKafka());
    app = await startTestApp(db, prefix);
  });
  afterEach(async () => {
    await app.close();
    await db.close();
  });

  async function create(): Promise<string> {
    const res = await app.request('/orders', { json: { userId: 1, sku: 'sku-1', quantity: 1 } });
    return res.body.orderId as string;
  }

  it('created → paid → cancelled: seq 2 and 3, one event each, in order', async () => {
    const id = await create();
    // fetch with no body (Content-Length: 0, no Content-Type), as the traffic generator does.
    const pay = await app.request(`/orders/${id}/pay`, { method: 'POST' });
    expect(pay.status).toBe(200);
    expect(pay.body).toMatchObject({ orderId: id, status: 'paid', seq: 2, mode: 'outbox' });
    const cancel = await app.request(`/orders/${id}/cancel`, {
      json: { reason: 'changed my mind' },
    });
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ status: 'cancelled', seq: 3 });

    const { rows } = await db.pool.query(
      'SELECT event_type, event_version, payload FROM outbox ORDER BY id',
    );
    expect(rows.map((r) => [r.event_type, r.payload.seq])).toEqual([
      ['OrderCreated', 1],
      ['OrderPaid', 2],
      ['OrderCancelled', 3],
    ]);
    expect(rows[1].payload.paidAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(rows[2].payload).toEqual({ orderId: id, seq: 3, reason: 'changed my mind' });
    const order = await db.pool.query('SELECT status, seq FROM orders');
    expect(order.rows[0]).toEqual({ status: 'cancelled', seq: 3 });
  });

  it('created → cancelled without a reason', async () => {
    const id = await create();
    const cancel = await app.request(`/orders/${id}/cancel`, { method: 'POST' });
    expect(cancel.body).toMatchObject({ status: 'cancelled', seq: 2 });
    const { rows } = await db.pool.query(
      "SELECT payload FROM outbox WHERE event_type = 'OrderCancelled'",
    );
    expect(rows[0].payload).toEqual({ orderId: id, seq: 2 });
  });

  it('invalid transitions are 409 and write nothing', async () => {
    const id = await create();
    await app.request(`/orders/${id}/pay`, { method: 'POST' });
    const payAgain = await app.request(`/orders/${id}/pay`, { method: 'POST' });
    expect(payAgain.status).toBe(409);
    expect(payAgain.body.error).toBe('cannot pay an order that is paid');
    await app.request(`/orders/${id}/cancel`, { method: 'POST' });
    for (const action of ['pay', 'cancel']) {
      const res = await app.request(`/orders/${id}/${action}`, { method: 'POST' });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ details: { status: 'cancelled' } });
    }
    expect(await db.counts()).toEqual({ orders: 1, outbox: 3, idempotency_keys: 0 });
    const { rows } = await db.pool.query('SELECT seq FROM orders');
    expect(rows[0].seq).toBe(3);
  });

  it('concurrent transitions of one order queue on the row lock: seqs stay dense', async () => {
    const id = await create();
    const results = await Promise.all([
      app.request(`/orders/${id}/pay`, { method: 'POST' }),
      app.request(`/orders/${id}/cancel`, { method: 'POST' }),
      app.request(`/orders/${id}/pay`, { method: 'POST' }),
    ]);
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    const { rows } = await db.pool.query<{ seq: number }>(
      "SELECT (payload->>'seq')::int AS seq FROM outbox ORDER BY id",
    );
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
  });
});
