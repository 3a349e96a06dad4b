import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoTopics, FailurePoint, FailurePoints } from '@outbox/lab';
import {
  freeSystemPorts,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '@outbox/testkit';
import { startSystem, type System } from '../src/index.ts';

/** A fresh W3C trace context, as a client that traces would send it. */
function clientTrace(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const one = <T>(list: T[], what: string): T => {
  if (list.length !== 1) throw new Error(`expected one ${what}, found ${list.length}`);
  return list[0]!;
};

/** The spans of one trace, with the questions the assertions ask of them. */
class Trace {
  constructor(readonly spans: ReceivedSpan[]) {}
  named(name: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.name === name);
  }
  childrenOf(parent: ReceivedSpan): ReceivedSpan[] {
    return this.spans.filter((s) => s.parentSpanId === parent.spanId);
  }
  /** Whether `span` lies under `ancestor` (through express' layers, say). */
  under(span: ReceivedSpan, ancestor: ReceivedSpan): boolean {
    const byId = new Map(this.spans.map((s) => [s.spanId, s]));
    for (let s = byId.get(span.parentSpanId ?? ''); s; s = byId.get(s.parentSpanId ?? ''))
      if (s.spanId === ancestor.spanId) return true;
    return false;
  }
}

/**
 * OpenTelemetry across the whole backend as real processes: order-api, two
 * publisher-workers and inventory-consumer export to a plain OTLP/HTTP receiver on
 * 127.0.0.1 (no collector), through the standard environment variables.
 */
describe('traces: one order, one trace across the services', () => {
  let receiver: OtlpReceiver;
  let system: System;
  let topic: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const id = `trace_${randomBytes(3).toString('hex')}`;
    // Away from the demo's 3000–3004 and below the ephemeral range (testkit).
    const ports = await freeSystemPorts();
    system = await startSystem({
      schema: `scn_${id}`,
      topicPrefix: `scn-${id}.`,
      ports,
      dashboard: false,
      env: {
        LOG_LEVEL: 'warn',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        // Spans leave within a fifth of a second instead of the SDK's 5 s.
        OTEL_BSP_SCHEDULE_DELAY: '200',
      },
      log: (line) => process.stderr.write(`[tracing] ${line}\n`),
    });
    await system.waitReady();
    topic = demoTopics(system.topicPrefix).orders;
  });
  afterAll(async () => {
    await system?.stop();
    await receiver?.close();
  });

  async function postOrder(traceparent: string): Promise<{ orderId: string; eventId: string }> {
    const res = await fetch(`${system.urls.orderApi}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent },
      body: JSON.stringify({ userId: 7, sku: 'sku-1', quantity: 1 }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { orderId: string; eventId: string };
  }

  /** Waits for the trace to hold `consumed` consumer spans, each with its inbox verdict. */
  function traceWith(traceId: string, consumed: number): Promise<Trace> {
    return receiver.waitFor(
      (spans) => {
        const t = new Trace(spans.filter((s) => s.traceId === traceId));
        const process = t.spans.filter((s) => s.kind === 'consumer');
        const checked = process.filter((p) =>
          t.childrenOf(p).some((c) => c.name === 'inbox.check'),
        );
        const sent = t.spans.filter((s) => s.kind === 'producer');
        return checked.length >= consumed &&
          sent.length >= consumed &&
          t.named('outbox.append').length === 1 &&
          t.named('POST /orders').length === 1
          ? t
          : undefined;
      },
      `the request, the append, ${consumed} send(s) and ${consumed} consumer span(s) with an inbox.check in trace ${traceId}`,
      90_000,
    );
  }

  it('POST /orders → outbox.append (+ pg) → stored traceparent → outbox.publish → <topic> process → inbox.check, inventory.reserve', async () => {
    const client = clientTrace();
    const { eventId } = await postOrder(client.traceparent);
    const t = await traceWith(client.traceId, 1);

    expect(new Set(t.spans.map((s) => s.service))).toEqual(
      new Set(['order-api', 'publisher-worker', 'inventory-consumer']),
    );
    // order-api: the server span continues the client's trace.
    const request = one(t.named('POST /orders'), 'POST /orders span');
    expect(request).toMatchObject({
      kind: 'server',
      service: 'order-api',
      parentSpanId: client.spanId,
    });
    const append = one(t.named('outbox.append'), 'outbox.append span');
    expect(t.under(append, request)).toBe(true);
    expect(append.attributes).toMatchObject({
      'outbox.event_id': eventId,
      'outbox.aggregate_type': 'order',
      'outbox.event_type': 'OrderCreated',
    });
    // The database, through pg's instrumentation: the one statement that writes the
    // order and its event, under the append span; and pg spans under the request.
    const insert = t
      .childrenOf(append)
      .find(
        (s) =>
          s.kind === 'client' &&
          String(s.attributes['db.query.text']).includes('INSERT INTO outbox'),
      );
    expect(insert?.attributes['db.system.name']).toBe('postgresql');
    expect(
      t.spans.filter((s) => s.name.startsWith('pg.') && t.under(s, request)).length,
    ).toBeGreaterThan(1);

    // The traceparent stored with the event is the append span's.
    const { rows } = await system.pool.query<{ headers: Record<string, string> }>(
      'SELECT headers FROM outbox WHERE id = $1',
      [eventId],
    );
    expect(rows[0]?.headers.traceparent).toBe(`00-${client.traceId}-${append.spanId}-01`);

    // publisher-worker: the send, a child of the stored context.
    const publish = one(
      t.spans.filter((s) => s.kind === 'producer'),
      'publish span',
    );
    expect(publish).toMatchObject({
      name: `outbox.publish ${topic}`,
      service: 'publisher-worker',
      parentSpanId: append.spanId,
      statusCode: 0,
    });
    expect(publish.attributes).toMatchObject({
      'outbox.event_id': eventId,
      'messaging.system': 'kafka',
      'messaging.destination.name': topic,
    });

    // inventory-consumer: the message's span is the send's child; below it the inbox's
    // verdict and the reservation (whose statement pg traces).
    const processed = one(
      t.spans.filter((s) => s.kind === 'consumer'),
      'consumer span',
    );
    expect(processed).toMatchObject({
      name: `${topic} process`,
      service: 'inventory-consumer',
      parentSpanId: publish.spanId,
    });
    expect(processed.attributes).toMatchObject({
      'outbox.event_id': eventId,
      'outbox.delivery.outcome': 'processed',
    });
    const below = t.childrenOf(processed);
    expect(
      one(
        below.filter((s) => s.name === 'inbox.check'),
        'inbox.check',
      ).attributes,
    ).toMatchObject({
      'outbox.inbox.duplicate': false,
      'outbox.event_id': eventId,
    });
    const reserve = one(
      below.filter((s) => s.name === 'inventory.reserve'),
      'inventory.reserve',
    );
    expect(t.childrenOf(reserve).some((s) => s.name.startsWith('pg.query'))).toBe(true);
    // Nothing of the order's way fell out of the trace: every parent is in it.
    const ids = new Set(t.spans.map((s) => s.spanId));
    expect(
      t.spans.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId)).map((s) => s.name),
    ).toEqual(['POST /orders']);
  });

  it('kill mid-publish: the event is sent twice; the second delivery’s inbox.check says duplicate, and nothing is reserved under it', async () => {
    const points = new FailurePoints(system.pool);
    await points.arm(FailurePoint.workerKillMidPublish, { mode: 'once' });
    const client = clientTrace();
    const { eventId } = await postOrder(client.traceparent);
    const t = await traceWith(client.traceId, 2);

    const append = one(t.named('outbox.append'), 'outbox.append span');
    // Two sends of the one event (the first worker died after Kafka's ack, before
    // marking it sent), both children of the context stored with the event.
    const publishes = t.spans.filter((s) => s.kind === 'producer');
    expect(publishes).toHaveLength(2);
    for (const p of publishes) {
      expect(p.parentSpanId).toBe(append.spanId);
      expect(p.attributes['outbox.event_id']).toBe(eventId);
    }
    const deliveries = t.spans
      .filter((s) => s.kind === 'consumer')
      .map((span) => {
        const below = t.childrenOf(span);
        return {
          span,
          duplicate: one(
            below.filter((s) => s.name === 'inbox.check'),
            'inbox.check',
          ).attributes['outbox.inbox.duplicate'],
          reserved: below.some((s) => s.name === 'inventory.reserve'),
        };
      });
    // Each delivery is the child of one of the two sends.
    expect(new Set(deliveries.map((d) => d.span.parentSpanId))).toEqual(
      new Set(publishes.map((p) => p.spanId)),
    );
    const fresh = one(
      deliveries.filter((d) => d.duplicate === false),
      'first delivery',
    );
    const again = one(
      deliveries.filter((d) => d.duplicate === true),
      'duplicate delivery',
    );
    expect(fresh.reserved).toBe(true);
    expect(fresh.span.attributes['outbox.delivery.outcome']).toBe('processed');
    expect(again.reserved).toBe(false);
    expect(again.span.attributes['outbox.delivery.outcome']).toBe('duplicate');
  });
});
