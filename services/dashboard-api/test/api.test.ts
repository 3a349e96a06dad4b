import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiErrorSchema,
  auditResponseSchema,
  journeySchema,
  type AuditResponse,
  type Journey,
  failurePointStateSchema,
  resetResponseSchema,
  settingsSchema,
  stateResponseSchema,
  type ApiError,
  type FailurePointState,
  type Settings,
  type StateResponse,
} from '../src/contract.ts';
import { FAILURE_POINTS, SCENARIOS } from '../src/teaching/index.ts';
import { startTestDashboard, type TestDashboard } from './support/dashboard.ts';
import { createTestDb, type TestDb } from '@outbox/testkit';
import { createOrder, deliver, markSent } from './support/rows.ts';

describe('REST: state, failure points, settings, reset, validation', () => {
  let db: TestDb;
  let dash: TestDashboard;

  beforeAll(async () => {
    db = await createTestDb({ stock: 1000, max: 6 });
    dash = await startTestDashboard(db);
  });
  afterAll(async () => {
    await dash?.close();
    await db?.close();
  });

  it('GET /api/state: settings, every failure point described, the four scenarios', async () => {
    const res = await dash.request<StateResponse>('/api/state');
    expect(res.status).toBe(200);
    // The web parses every answer with the contract's schema: so do we.
    stateResponseSchema.parse(res.body);
    auditResponseSchema.parse((await dash.request('/api/audit')).body);
    expect(res.body.settings).toEqual({
      mode: 'outbox',
      trafficRate: 0,
      relay: { wanted: 'polling', active: 'polling', phase: null },
      acks: 'all',
    });
    expect(res.body.failurePoints.map((p) => p.name)).toEqual(FAILURE_POINTS.map((p) => p.name));
    for (const p of res.body.failurePoints) {
      expect(p.description.length).toBeGreaterThan(40);
      expect(p.watch.length).toBeGreaterThan(20);
      expect(p).toMatchObject({ mode: 'off', active: false });
    }
    expect(res.body.scenarios.map((s) => s.id)).toEqual(SCENARIOS.map((s) => s.id));
  });

  it('arms each kind of failure point as the services read it', async () => {
    const arm = (name: string, json: unknown) =>
      dash.request<FailurePointState & ApiError>(`/api/failure-points/${name}`, {
        method: 'POST',
        json,
      });
    const shot = await arm('worker.kill_mid_publish', { mode: 'times', times: 2 });
    failurePointStateSchema.parse(shot.body);
    expect(shot.body).toMatchObject({ mode: 'times', remaining: 2, active: true });
    const window = await arm('worker.kafka_outage', { mode: 'on', seconds: 7 });
    expect(window.body).toMatchObject({ mode: 'on', active: true, params: { seconds: 7 } });
    const until = Date.parse(window.body.activeUntil ?? '');
    expect(until - Date.now()).toBeGreaterThan(5_000);
    expect(until - Date.now()).toBeLessThanOrEqual(7_000);
    const defaulted = await arm('worker.kafka_outage', { mode: 'on' });
    expect(defaulted.body.params).toMatchObject({ seconds: 10 });
    expect((await arm('consumer.inbox_off', { mode: 'on' })).body.active).toBe(true);
    expect((await arm('consumer.inbox_off', { mode: 'off' })).body.active).toBe(false);

    const { rows } = await db.pool.query<{ name: string; mode: string; remaining: number }>(
      "SELECT name, mode, remaining FROM failure_points WHERE mode <> 'off' ORDER BY name",
    );
    expect(rows).toEqual([
      { name: 'worker.kafka_outage', mode: 'on', remaining: 0 },
      { name: 'worker.kill_mid_publish', mode: 'times', remaining: 2 },
    ]);

    expect((await arm('consumer.inbox_off', { mode: 'once' })).status).toBe(400);
    expect((await arm('worker.kill_mid_publish', { mode: 'times' })).status).toBe(400);
    expect((await arm('worker.kill_mid_publish', { mode: 'on', seconds: 3 })).status).toBe(400);
    expect((await arm('worker.kill_mid_publish', { mode: 'sometimes' })).status).toBe(400);
    expect((await arm('worker.nonexistent', { mode: 'on' })).status).toBe(400);
  });

  it('PUT /api/mode and /api/traffic write the settings the services follow', async () => {
    const mode = await dash.request<Settings>('/api/mode', {
      method: 'PUT',
      json: { mode: 'naive' },
    });
    const polling = { wanted: 'polling', active: 'polling', phase: null };
    expect(settingsSchema.parse(mode.body)).toEqual({
      mode: 'naive',
      trafficRate: 0,
      relay: polling,
      acks: 'all',
    });
    const traffic = await dash.request<Settings>('/api/traffic', {
      method: 'PUT',
      json: { rate: 12.5 },
    });
    expect(traffic.body).toEqual({
      mode: 'naive',
      trafficRate: 12.5,
      relay: polling,
      acks: 'all',
    });
    const { rows } = await db.pool.query('SELECT key, value FROM demo_settings ORDER BY key');
    expect(rows).toEqual([
      { key: 'order_mode', value: 'naive' },
      { key: 'traffic_rate', value: 12.5 },
    ]);
    expect((await dash.dashboard.engine.tick()).settings).toEqual({
      mode: 'naive',
      trafficRate: 12.5,
      relay: polling,
      acks: 'all',
    });
    for (const [path, json] of [
      ['/api/mode', { mode: 'both' }],
      ['/api/traffic', { rate: -1 }],
      ['/api/traffic', { rate: 1e9 }],
      ['/api/traffic', { rate: '5' }],
      ['/api/relay', { relay: 'debezium' }],
      ['/api/relay', {}],
      ['/api/acks', { acks: 0 }],
      ['/api/acks', { acks: '-1' }],
      ['/api/acks', {}],
    ] as const) {
      expect((await dash.request(path, { method: 'PUT', json })).status, JSON.stringify(json)).toBe(
        400,
      );
    }
    const malformed = await fetch(`${dash.url}/api/mode`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"mode":',
    });
    expect(malformed.status).toBe(400);
    const form = await fetch(`${dash.url}/api/mode`, {
      method: 'PUT',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'mode=naive',
    });
    expect(form.status).toBe(415);
  });

  it('PUT /api/relay asks for a relay; the demo carries the switch out, so active stays until it has', async () => {
    const asked = await dash.request<Settings>('/api/relay', {
      method: 'PUT',
      json: { relay: 'cdc' },
    });
    expect(asked.status).toBe(200);
    expect(settingsSchema.parse(asked.body).relay).toEqual({
      wanted: 'cdc',
      active: 'polling',
      phase: null,
    });
    const { rows } = await db.pool.query(
      "SELECT value FROM demo_settings WHERE key = 'relay_wanted'",
    );
    expect(rows).toEqual([{ value: 'cdc' }]);
    await dash.request('/api/relay', { method: 'PUT', json: { relay: 'polling' } });
  });

  it('PUT /api/acks sets the relay producer acks the publisher follows', async () => {
    const unsafe = await dash.request<Settings>('/api/acks', {
      method: 'PUT',
      json: { acks: '1' },
    });
    expect(unsafe.status).toBe(200);
    expect(settingsSchema.parse(unsafe.body).acks).toBe('1');
    const { rows } = await db.pool.query(
      "SELECT value FROM demo_settings WHERE key = 'relay_acks'",
    );
    expect(rows).toEqual([{ value: '1' }]);
    expect((await dash.dashboard.engine.tick()).settings.acks).toBe('1');
    const safe = await dash.request<Settings>('/api/acks', {
      method: 'PUT',
      json: { acks: 'all' },
    });
    expect(safe.body.acks).toBe('all');
  });

  it('POST /api/reset empties the data, gives the stock back, disarms, and the stats start over', async () => {
    for (let i = 0; i < 3; i += 1) {
      const o = await createOrder(db.pool, { quantity: 2 });
      await markSent(db.pool, [o.outboxId!]);
      await deliver(db.pool, { orderId: o.orderId, eventId: o.outboxId!, quantity: 2 });
      await deliver(db.pool, { orderId: o.orderId, eventId: o.outboxId!, outcome: 'duplicate' });
    }
    await db.pool.query(
      "UPDATE inventory SET available = available - 6, reserved = reserved + 6 WHERE sku = 'sku-1'",
    );
    const before = await dash.dashboard.engine.tick();
    expect(before.totals).toMatchObject({ orders: 3, published: 3, deliveries: 6 });

    const res = await dash.request('/api/reset', { method: 'POST' });
    expect(res.status).toBe(200);
    resetResponseSchema.parse(res.body);
    const after = await dash.dashboard.engine.tick();
    expect(after.totals).toEqual({ orders: 0, published: 0, deliveries: 0 });
    expect(Object.values(after.invariants).every((n) => n === 0)).toBe(true);
    expect(after.latestAnomaly).toBeNull();
    const { rows } = await db.pool.query(
      `SELECT (SELECT count(*) FROM orders)::int + (SELECT count(*) FROM outbox)::int
            + (SELECT count(*) FROM consumer_deliveries)::int + (SELECT count(*) FROM inbox)::int
            + (SELECT count(*) FROM reservations)::int AS rows,
              (SELECT sum(reserved) FROM inventory)::int AS reserved,
              (SELECT available FROM inventory WHERE sku = 'sku-1') AS available,
              (SELECT count(*) FROM failure_points WHERE mode <> 'off')::int AS armed`,
    );
    expect(rows[0]).toEqual({ rows: 0, reserved: 0, available: 1000, armed: 0 });
    // Settings survive a reset.
    expect(after.settings.mode).toBe('naive');

    // Ids keep counting up, and new rows are counted again from zero.
    const o = await createOrder(db.pool);
    expect(BigInt(o.outboxId!)).toBeGreaterThan(3n);
    expect((await dash.dashboard.engine.tick()).outbox.pending).toBe(1);
  });

  it('GET /api/audit lists rows marked sent and never delivered, where the broker acknowledged them', async () => {
    const a = await createOrder(db.pool);
    const b = await createOrder(db.pool);
    // a: as the relay marks it (core's markSent records partition and offset);
    // b: sent without a recorded position (CDC, or before core's migration 000009).
    await markSent(db.pool, [a.outboxId!, b.outboxId!]);
    await db.pool.query('UPDATE outbox SET kafka_partition = 4, kafka_offset = $2 WHERE id = $1', [
      a.outboxId,
      '9007199254740993', // past 2^53: an int64 offset must travel as a string, exactly
    ]);
    const res = await dash.request<AuditResponse>('/api/audit?settleSeconds=0');
    expect(res.status).toBe(200);
    const lost = auditResponseSchema.parse(res.body).sentNotDelivered!;
    expect(lost.count).toBe(2);
    expect(lost.rows.map((r) => [r.id, r.partition, r.offset])).toEqual([
      [a.outboxId, 4, '9007199254740993'],
      [b.outboxId, expect.any(Number), null],
    ]);
    // The order's journey says where the event should be, and that it never arrived.
    const j = (await dash.request<Journey>(`/api/orders/${a.orderId}/journey`)).body;
    expect(journeySchema.parse(j).outbox[0]).toMatchObject({
      kafkaPartition: 4,
      kafkaOffset: '9007199254740993',
    });
    expect(j.steps.find((s) => s.step === 'kafka')).toMatchObject({
      done: false,
      detail: expect.stringContaining(
        'acknowledged it at orders.events partition 4 offset 9007199254740993',
      ),
    });
    await dash.request('/api/reset', { method: 'POST' });
  });

  it('unknown routes are JSON 404s; a journey of a bad id is 400, of an unknown one 404', async () => {
    const unknown = await dash.request<ApiError>('/api/nothing');
    expect(unknown.status).toBe(404);
    apiErrorSchema.parse(unknown.body);
    expect(unknown.body.error).toContain('/api/nothing');
    expect((await dash.request('/api/orders/not-a-uuid/journey')).status).toBe(400);
    expect(
      (await dash.request('/api/orders/6f1c1d2e-1111-4222-8333-944445555666/journey')).status,
    ).toBe(404);
    expect((await dash.request('/api/events?limit=0')).status).toBe(400);
    // No web build here: `/` says how to make one.
    const root = await dash.request<{ web: string }>('/');
    expect(root.status).toBe(503);
    expect(root.body.web).toContain('@outbox/web build');
  });
});
