import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  outboxPageSchema,
  requeueResponseSchema,
  type ApiError,
  type OutboxPage,
  type RequeueResponse,
} from '../src/contract.ts';
import { startTestDashboard, type TestDashboard } from './support/dashboard.ts';
import { createTestDb, type TestDb } from '@outbox/testkit';
import { createOrder, markFailed, markSent } from './support/rows.ts';

describe('outbox browser and requeue', () => {
  let db: TestDb;
  let dash: TestDashboard;
  const ids: Record<'sent' | 'pending' | 'failed' | 'dead', string[]> = {
    sent: [],
    pending: [],
    failed: [],
    dead: [],
  };
  let aggregate: string;

  beforeAll(async () => {
    db = await createTestDb({ stock: 1000, max: 6 });
    dash = await startTestDashboard(db);
    for (let i = 0; i < 7; i += 1) ids.sent.push((await createOrder(db.pool)).outboxId!);
    await markSent(db.pool, ids.sent);
    for (let i = 0; i < 3; i += 1) ids.pending.push((await createOrder(db.pool)).outboxId!);
    const failed = await createOrder(db.pool);
    await markFailed(db.pool, failed.outboxId!, 'KafkaJSProtocolError: message too large', false);
    ids.failed.push(failed.outboxId!);
    const dead = await createOrder(db.pool);
    await markFailed(db.pool, dead.outboxId!, 'no topic for aggregate type "order"', true);
    ids.dead.push(dead.outboxId!);
    aggregate = dead.orderId;
  });
  afterAll(async () => {
    await dash?.close();
    await db?.close();
  });

  const page = (query: string) => dash.request<OutboxPage>(`/api/outbox?${query}`);

  it('filters by status, newest first, with the error of failed and dead rows', async () => {
    for (const status of ['sent', 'pending', 'failed', 'dead'] as const) {
      const res = await page(`status=${status}`);
      expect(res.status).toBe(200);
      outboxPageSchema.parse(res.body);
      expect(res.body.rows.map((r) => r.id)).toEqual([...ids[status]].reverse());
      expect(res.body.rows.every((r) => r.status === status)).toBe(true);
      expect(res.body.nextCursor).toBeNull();
    }
    const [dead] = (await page('status=dead')).body.rows;
    expect(dead).toMatchObject({ attempts: 1, error: 'no topic for aggregate type "order"' });
    expect(dead?.deadLetteredAt).not.toBeNull();
    const [failed] = (await page('status=failed')).body.rows;
    expect(failed?.error).toContain('message too large');
    expect(failed?.deadLetteredAt).toBeNull();
  });

  it('pages with a keyset cursor, and filters by aggregate and event type', async () => {
    const all = [...ids.sent, ...ids.pending, ...ids.failed, ...ids.dead].reverse();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { body: OutboxPage } = await page(`limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...res.body.rows.map((r) => r.id));
      cursor = res.body.nextCursor;
      pages += 1;
    } while (cursor);
    expect(seen).toEqual(all);
    expect(pages).toBe(3);

    const byAggregate = await page(`aggregateId=${aggregate}`);
    expect(byAggregate.body.rows.map((r) => r.id)).toEqual(ids.dead);
    expect((await page('eventType=OrderCreated&limit=200')).body.rows).toHaveLength(all.length);
    expect((await page('eventType=OrderPaid')).body.rows).toHaveLength(0);
    expect((await page(`status=sent&aggregateId=${aggregate}`)).body.rows).toHaveLength(0);
  });

  it('refuses bad queries with 400 naming the field', async () => {
    for (const bad of ['status=lost', 'limit=0', 'limit=201', 'cursor=abc', 'aggregateId=']) {
      const res = await dash.request<ApiError>(`/api/outbox?${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.issues?.length, bad).toBeGreaterThan(0);
    }
  });

  it('requeues a dead-lettered row: pending again, due now, attempts reset', async () => {
    const id = ids.dead[0]!;
    const res = await dash.request<RequeueResponse>(`/api/outbox/${id}/requeue`, {
      method: 'POST',
    });
    expect(res.status).toBe(200);
    requeueResponseSchema.parse(res.body);
    expect(res.body.row).toMatchObject({
      id,
      status: 'pending',
      attempts: 0,
      deadLetteredAt: null,
    });
    const { rows } = await db.pool.query<{ due: boolean }>(
      'SELECT next_attempt_at <= now() AS due FROM outbox WHERE id = $1',
      [id],
    );
    expect(rows[0]?.due).toBe(true);
    expect((await page('status=dead')).body.rows).toHaveLength(0);
    const tick = await dash.dashboard.engine.tick();
    expect(tick.outbox).toMatchObject({ deadLettered: 0, pending: 5 });

    expect(
      (await dash.request(`/api/outbox/${ids.sent[0]}/requeue`, { method: 'POST' })).status,
    ).toBe(409);
    expect((await dash.request('/api/outbox/999999999/requeue', { method: 'POST' })).status).toBe(
      404,
    );
    expect((await dash.request('/api/outbox/x1/requeue', { method: 'POST' })).status).toBe(400);
  });
});
