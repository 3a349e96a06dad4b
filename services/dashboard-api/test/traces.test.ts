import { randomBytes } from 'node:crypto';
import { createTestDb, type TestDb } from '@outbox/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { journeySchema, type ApiError, type Journey } from '../src/contract.ts';
import type { SpanRecord } from '@outbox/lab';
import { SpanStore } from '../src/traces/span-store.ts';
import { startTestDashboard, type TestDashboard } from './support/dashboard.ts';
import { createOrder } from './support/rows.ts';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
/** Epoch ms → OTLP JSON's nanoseconds as decimal text, as the exporter sends them. */
const nanos = (ms: number) => `${BigInt(Math.round(ms * 1000)) * 1000n}`;

interface SpanSpec {
  id: string;
  parent?: string;
  name: string;
  /** OTLP SpanKind: 2 server, 4 producer, 5 consumer, 1 internal. */
  kind: number;
  start: number;
  end: number;
  attributes?: Record<string, string | boolean>;
}

/** An ExportTraceServiceRequest in the protobuf JSON mapping (hex ids, nanos as text). */
function exportOf(traceId: string, services: Record<string, SpanSpec[]>) {
  return {
    resourceSpans: Object.entries(services).map(([service, spans]) => ({
      resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
      scopeSpans: [
        {
          scope: { name: 'test' },
          spans: spans.map((s) => ({
            traceId,
            spanId: s.id,
            ...(s.parent ? { parentSpanId: s.parent } : {}),
            name: s.name,
            kind: s.kind,
            startTimeUnixNano: nanos(s.start),
            endTimeUnixNano: nanos(s.end),
            attributes: Object.entries(s.attributes ?? {}).map(([key, v]) => ({
              key,
              value: typeof v === 'boolean' ? { boolValue: v } : { stringValue: v },
            })),
            status: { code: 0 },
          })),
        },
      ],
    })),
  };
}

describe('the order journey: legs from the spans posted to /v1/traces', () => {
  let db: TestDb;
  let dash: TestDashboard;

  beforeAll(async () => {
    db = await createTestDb({ stock: 100, max: 4 });
    dash = await startTestDashboard(db);
  });
  /** The order's outbox row carries the traceparent of `spanId` (its append), as order-api writes it. */
  const stampTraceparent = (outboxId: unknown, traceId: string, spanId: string) =>
    db.pool.query(
      `UPDATE outbox SET headers = jsonb_build_object('traceparent', $2::text) WHERE id = $1`,
      [outboxId, `00-${traceId}-${spanId}-01`],
    );

  afterAll(async () => {
    await dash?.close();
    await db?.close();
  });

  it('without spans the journey says tracing received nothing and lists no trace', async () => {
    const { orderId } = await createOrder(db.pool);
    const res = await dash.request<Journey>(`/api/orders/${orderId}/journey`);
    expect(res.status).toBe(200);
    const journey = journeySchema.parse(res.body);
    expect(journey.tracing).toEqual({ spansReceived: 0, tracesEvicted: 0, lastReceivedAt: null });
    expect(journey.traces).toEqual([]);
  });

  it('commit → outbox → produce → consume → reservation, and a duplicate the inbox caught', async () => {
    const { orderId, outboxId } = await createOrder(db.pool);
    const traceId = hex(16);
    const ids = Array.from({ length: 9 }, () => hex(8));
    const [request, append, publish, again, consume, check, reserve, consume2, check2] = ids as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    await stampTraceparent(outboxId, traceId, append);
    const t0 = Date.now() - 1000;
    const eventId = String(outboxId);
    const body = exportOf(traceId, {
      'order-api': [
        { id: request, name: 'POST /orders', kind: 2, start: t0, end: t0 + 4.5 },
        { id: append, parent: request, name: 'outbox.append', kind: 1, start: t0 + 1, end: t0 + 2 },
      ],
      'publisher-worker': [
        // Sent twice (the first send's process was killed after the ack): the journey
        // times the first acknowledged send.
        {
          id: publish,
          parent: append,
          name: 'outbox.publish orders.events',
          kind: 4,
          start: t0 + 10,
          end: t0 + 13,
          attributes: { 'outbox.event_id': eventId },
        },
        {
          id: again,
          parent: append,
          name: 'outbox.publish orders.events',
          kind: 4,
          start: t0 + 400,
          end: t0 + 402,
          attributes: { 'outbox.event_id': eventId },
        },
      ],
      'inventory-consumer': [
        {
          id: consume,
          parent: publish,
          name: 'orders.events process',
          kind: 5,
          start: t0 + 20,
          end: t0 + 30,
        },
        {
          id: check,
          parent: consume,
          name: 'inbox.check',
          kind: 1,
          start: t0 + 21,
          end: t0 + 22,
          attributes: { 'outbox.inbox.duplicate': false },
        },
        {
          id: reserve,
          parent: consume,
          name: 'inventory.reserve',
          kind: 1,
          start: t0 + 22,
          end: t0 + 25,
        },
        {
          id: consume2,
          parent: again,
          name: 'orders.events process',
          kind: 5,
          start: t0 + 410,
          end: t0 + 412,
        },
        {
          id: check2,
          parent: consume2,
          name: 'inbox.check',
          kind: 1,
          start: t0 + 410.5,
          end: t0 + 411,
          attributes: { 'outbox.inbox.duplicate': true },
        },
      ],
    });
    const posted = await dash.request('/v1/traces', { json: body });
    expect(posted.status).toBe(200);
    expect(posted.body).toEqual({ partialSuccess: {} });

    const journey = journeySchema.parse(
      (await dash.request(`/api/orders/${orderId}/journey`)).body,
    );
    expect(journey.tracing.spansReceived).toBe(9);
    expect(journey.tracing.lastReceivedAt).not.toBeNull();
    expect(journey.traces).toHaveLength(1);
    const trace = journey.traces[0]!;
    expect(trace).toMatchObject({ eventId, eventType: 'OrderCreated', traceId, spans: 9 });
    expect(trace.services).toEqual(['inventory-consumer', 'order-api', 'publisher-worker']);
    expect(trace.legs.map((l) => [l?.leg, l?.ms])).toEqual([
      ['commit', 4.5],
      ['outbox', 5.5],
      ['produce', 3],
      // From the send (t0 + 10), not the ack: the consumer may start before the ack.
      ['consume', 10],
      ['reservation', 5],
    ]);
    expect(trace.legs[0]?.from).toBe(new Date(t0).toISOString());
    expect(trace.deliveries.map((d) => d.duplicate)).toEqual([false, true]);
    expect(trace.deliveries.every((d) => d.service === 'inventory-consumer')).toBe(true);
  });

  /**
   * Found by a fresh-clone CI run (system.test's kill mid-publish: "timed out waiting for
   * a trace with the duplicate delivery"): the worker killed mid-publish had not exported
   * its send's span, so the first delivery's parent was missing from the trace and the
   * journey counted one delivery. A consumer span that names the event counts as well.
   */
  it("counts a delivery whose send's span never arrived (its worker was killed)", async () => {
    const { orderId, outboxId } = await createOrder(db.pool);
    const traceId = hex(16);
    const [request, append, lost, again, consume, check, consume2, check2] = Array.from(
      { length: 8 },
      () => hex(8),
    ) as [string, string, string, string, string, string, string, string];
    await stampTraceparent(outboxId, traceId, append);
    const t0 = Date.now() - 1000;
    const eventId = String(outboxId);
    const delivery = (id: string, parent: string, start: number) => ({
      id,
      parent,
      name: 'orders.events process',
      kind: 5,
      start,
      end: start + 2,
      attributes: { 'outbox.event_id': eventId },
    });
    const inbox = (id: string, parent: string, start: number, duplicate: boolean) => ({
      id,
      parent,
      name: 'inbox.check',
      kind: 1,
      start,
      end: start + 1,
      attributes: { 'outbox.inbox.duplicate': duplicate },
    });
    const body = exportOf(traceId, {
      'order-api': [
        { id: request, name: 'POST /orders', kind: 2, start: t0, end: t0 + 4 },
        { id: append, parent: request, name: 'outbox.append', kind: 1, start: t0 + 1, end: t0 + 2 },
      ],
      // Only the second send: the first one's process died before exporting (`lost`).
      'publisher-worker': [
        {
          id: again,
          parent: append,
          name: 'outbox.publish orders.events',
          kind: 4,
          start: t0 + 400,
          end: t0 + 402,
          attributes: { 'outbox.event_id': eventId },
        },
      ],
      'inventory-consumer': [
        delivery(consume, lost, t0 + 20),
        inbox(check, consume, t0 + 20.5, false),
        delivery(consume2, again, t0 + 410),
        inbox(check2, consume2, t0 + 410.5, true),
      ],
    });
    expect((await dash.request('/v1/traces', { json: body })).status).toBe(200);
    const journey = journeySchema.parse(
      (await dash.request(`/api/orders/${orderId}/journey`)).body,
    );
    expect(journey.traces[0]?.deliveries.map((d) => d.duplicate)).toEqual([false, true]);
  });

  it('a trace still under way: the legs not reached yet are null', async () => {
    const { orderId, outboxId } = await createOrder(db.pool);
    const traceId = hex(16);
    const request = hex(8);
    await stampTraceparent(outboxId, traceId, request);
    const t0 = Date.now();
    await dash.request('/v1/traces', {
      json: exportOf(traceId, {
        'order-api': [{ id: request, name: 'POST /orders', kind: 2, start: t0, end: t0 + 3 }],
      }),
    });
    const journey = journeySchema.parse(
      (await dash.request(`/api/orders/${orderId}/journey`)).body,
    );
    expect(journey.traces[0]?.legs.map((l) => l?.leg ?? null)).toEqual([
      'commit',
      null,
      null,
      null,
      null,
    ]);
  });

  it('refuses protobuf with the switch to name, and a body that is not an export', async () => {
    const proto = await dash.request<ApiError>('/v1/traces', {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: new Uint8Array([10, 0]),
    });
    expect(proto.status).toBe(415);
    expect(proto.body.error).toContain('OTEL_EXPORTER_OTLP_PROTOCOL=http/json');

    const bad = await dash.request<ApiError>('/v1/traces', {
      json: { resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'xyz' }] }] }] },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('traceId');
  });

  it('with a CONTROL_TOKEN the exporter must send it', async () => {
    const token = 'a-token-of-sixteen-chars-or-more';
    const guarded = await startTestDashboard(db, { CONTROL_TOKEN: token });
    try {
      const body = exportOf(hex(16), {
        'order-api': [{ id: hex(8), name: 'POST /orders', kind: 2, start: 1, end: 2 }],
      });
      expect((await guarded.request('/v1/traces', { json: body })).status).toBe(401);
      const ok = await guarded.request('/v1/traces', {
        json: body,
        headers: { authorization: `Bearer ${token}` },
      });
      expect(ok.status).toBe(200);
    } finally {
      await guarded.close();
    }
  });
});

describe('SpanStore: the journey window', () => {
  const span = (traceId: string, name: string, kind: SpanRecord['kind']): SpanRecord => ({
    traceId,
    spanId: hex(8),
    parentSpanId: undefined,
    name,
    kind,
    service: 'order-api',
    startMs: 1,
    endMs: 2,
    attributes: {},
    statusCode: 0,
  });

  it('holds the spans the legs read, counts the others, and drops the oldest traces first', () => {
    const store = new SpanStore(4);
    const [a, b, c] = [hex(16), hex(16), hex(16)];
    store.add([span(a, 'POST /orders', 'server'), span(a, 'pg.query:INSERT', 'client')]);
    store.add([span(b, 'POST /orders', 'server'), span(b, 'outbox.publish t', 'producer')]);
    expect(store.trace(a)?.spans.map((s) => s.name)).toEqual(['POST /orders']);
    expect(store.trace(a)?.total).toBe(2);
    expect(store.status).toMatchObject({ spansReceived: 4, spansHeld: 3, tracesEvicted: 0 });
    // Two more held spans: over 4, the trace first seen (a) goes.
    store.add([span(c, 't process', 'consumer'), span(c, 'inbox.check', 'internal')]);
    expect(store.trace(a)).toBeUndefined();
    expect(store.trace(b)?.spans).toHaveLength(2);
    expect(store.status).toMatchObject({ spansHeld: 4, tracesEvicted: 1 });
  });
});
