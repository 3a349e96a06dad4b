import { traceIdOf } from '@outbox/lab';
import type { Pool } from 'pg';
import type { DeliveryOutcome, Journey, OrderMode } from '../contract.ts';
import { eventLegs } from '../traces/legs.ts';
import type { SpanStore } from '../traces/span-store.ts';
import { outboxColumns, toOutboxView, type OutboxDbRow } from './outbox-browser.ts';

interface OrderRow {
  id: string;
  user_id: number;
  sku: string;
  quantity: number;
  status: string;
  seq: number;
  mode: OrderMode;
  created_at: Date;
  updated_at: Date;
}

interface DeliveryRow {
  id: string;
  consumer: string;
  event_id: string;
  event_type: string;
  seq: number | null;
  topic: string;
  kafka_partition: number;
  kafka_offset: string;
  outcome: DeliveryOutcome;
  fifo_violation: boolean;
  received_at: Date;
}

interface InboxRow {
  consumer: string;
  event_id: string;
  topic: string;
  kafka_partition: number | null;
  kafka_offset: string | null;
  processed_at: Date;
}

interface ReservationRow {
  id: string;
  sku: string;
  quantity: number;
  event_id: string;
  released_at: Date | null;
  created_at: Date;
}

const iso = (d: Date | null | undefined) => d?.toISOString() ?? null;

/**
 * One order's way through the system: the order row → its outbox rows → where each
 * event sat in Kafka (partition/offset, as the consumer saw it) → the inbox rows →
 * the reservations. Every lookup goes through an index of its table. Returns
 * undefined when nothing at all is known of the id.
 */
export async function orderJourney(
  pool: Pool,
  orderId: string,
  spans?: SpanStore,
): Promise<Journey | undefined> {
  const [orders, outbox, deliveries, reservations] = await Promise.all([
    pool.query<OrderRow>('SELECT * FROM orders WHERE id = $1::uuid', [orderId]),
    pool.query<OutboxDbRow>(
      `SELECT ${outboxColumns} FROM outbox
        WHERE aggregate_type = 'order' AND aggregate_id = $1 ORDER BY outbox.id`,
      [orderId],
    ),
    pool.query<DeliveryRow>(
      `SELECT id::text AS id, consumer, event_id, event_type, seq, topic, kafka_partition,
              kafka_offset::text AS kafka_offset, outcome, fifo_violation, received_at
         FROM consumer_deliveries d WHERE d.aggregate_id = $1 ORDER BY d.id`,
      [orderId],
    ),
    pool.query<ReservationRow>(
      `SELECT id::text AS id, sku, quantity, event_id, released_at, created_at
         FROM reservations r WHERE r.order_id = $1::uuid ORDER BY r.id`,
      [orderId],
    ),
  ]);
  // The inbox is keyed by (consumer, event_id): look up exactly the pairs delivered.
  const pairs = [
    ...new Map(deliveries.rows.map((d) => [`${d.consumer}\u0000${d.event_id}`, d])).values(),
  ];
  const inbox = await pool.query<InboxRow>(
    `SELECT i.consumer, i.event_id, i.topic, i.kafka_partition, i.kafka_offset::text AS kafka_offset,
            i.processed_at
       FROM inbox i JOIN unnest($1::text[], $2::text[]) AS k(consumer, event_id)
         ON i.consumer = k.consumer AND i.event_id = k.event_id
      ORDER BY i.processed_at`,
    [pairs.map((p) => p.consumer), pairs.map((p) => p.event_id)],
  );
  const order = orders.rows[0];
  if (!order && outbox.rows.length === 0 && deliveries.rows.length === 0) return undefined;

  const firstOutbox = outbox.rows[0];
  const firstDelivery = deliveries.rows[0];
  const firstInbox = inbox.rows[0];
  const firstReservation = reservations.rows[0];
  const sent = outbox.rows.filter((r) => r.sent_at).length;
  // The first row the broker acknowledged with an offset: where a lost event should be.
  const acknowledged = outbox.rows.find((r) => r.kafka_offset !== null);
  return {
    orderId,
    order: order
      ? {
          id: order.id,
          userId: order.user_id,
          sku: order.sku,
          quantity: order.quantity,
          status: order.status,
          seq: order.seq,
          mode: order.mode,
          createdAt: order.created_at.toISOString(),
          updatedAt: order.updated_at.toISOString(),
        }
      : null,
    outbox: outbox.rows.map(toOutboxView),
    deliveries: deliveries.rows.map((d) => ({
      id: d.id,
      consumer: d.consumer,
      eventId: d.event_id,
      eventType: d.event_type,
      seq: d.seq,
      topic: d.topic,
      partition: d.kafka_partition,
      offset: d.kafka_offset,
      outcome: d.outcome,
      fifoViolation: d.fifo_violation,
      receivedAt: d.received_at.toISOString(),
    })),
    inbox: inbox.rows.map((i) => ({
      consumer: i.consumer,
      eventId: i.event_id,
      topic: i.topic,
      partition: i.kafka_partition,
      offset: i.kafka_offset,
      processedAt: i.processed_at.toISOString(),
    })),
    tracing: {
      spansReceived: spans?.status.spansReceived ?? 0,
      tracesEvicted: spans?.status.tracesEvicted ?? 0,
      lastReceivedAt: iso(
        spans?.status.lastReceivedAt ? new Date(spans.status.lastReceivedAt) : null,
      ),
    },
    traces: spans ? eventTraces(outbox.rows, spans) : [],
    reservations: reservations.rows.map((r) => ({
      id: r.id,
      sku: r.sku,
      quantity: r.quantity,
      eventId: r.event_id,
      releasedAt: iso(r.released_at),
      createdAt: r.created_at.toISOString(),
    })),
    steps: [
      {
        step: 'order',
        done: Boolean(order),
        at: iso(order?.created_at),
        detail: order
          ? `order ${order.status}, ${order.quantity} × ${order.sku} (${order.mode} mode)`
          : 'no order row: the event is a phantom (its transaction never committed)',
      },
      {
        step: 'outbox',
        done: firstOutbox !== undefined,
        at: iso(firstOutbox?.created_at),
        detail: firstOutbox
          ? `${outbox.rows.length} outbox row(s), ${sent} sent (first #${firstOutbox.id})`
          : order?.mode === 'naive'
            ? 'naive mode: no outbox row, the event was produced straight from the request'
            : 'no outbox row',
      },
      {
        step: 'kafka',
        done: firstDelivery !== undefined,
        at: iso(firstDelivery?.received_at),
        detail: firstDelivery
          ? `${firstDelivery.topic} partition ${firstDelivery.kafka_partition} offset ${firstDelivery.kafka_offset}` +
            (deliveries.rows.length > 1 ? ` (${deliveries.rows.length} deliveries)` : '')
          : acknowledged
            ? `not delivered (yet), though the broker acknowledged it at ${acknowledged.topic} partition ${acknowledged.kafka_partition} offset ${acknowledged.kafka_offset}`
            : 'not delivered (yet)',
      },
      {
        step: 'inbox',
        done: firstInbox !== undefined,
        at: iso(firstInbox?.processed_at),
        detail: firstInbox
          ? `${inbox.rows.length} inbox row(s) for consumer ${firstInbox.consumer}`
          : 'no inbox row',
      },
      {
        step: 'reservation',
        done: firstReservation !== undefined,
        at: iso(firstReservation?.created_at),
        detail: firstReservation
          ? `${reservations.rows.length} reservation(s)` +
            (reservations.rows.length > 1 ? ': stock reserved more than once' : '') +
            (firstReservation.released_at ? ', released' : '')
          : 'no reservation',
      },
    ],
  };
}

/** The legs of each outbox event whose stored traceparent's trace reached the dashboard. */
function eventTraces(rows: OutboxDbRow[], spans: SpanStore): Journey['traces'] {
  const traces: Journey['traces'] = [];
  for (const row of rows) {
    const traceId = traceIdOf(row.headers?.traceparent);
    if (!traceId) continue;
    const trace = spans.trace(traceId);
    if (!trace) continue;
    const t = eventLegs(traceId, trace, row.id);
    traces.push({
      eventId: row.id,
      eventType: row.event_type,
      traceId,
      spans: t.spans,
      services: t.services,
      legs: t.legs.map((l) =>
        l ? { leg: l.leg, from: new Date(l.fromMs).toISOString(), ms: round(l.ms) } : null,
      ),
      deliveries: t.deliveries.map((d) => ({
        service: d.service,
        at: new Date(d.atMs).toISOString(),
        duplicate: d.duplicate ?? null,
      })),
    });
  }
  return traces;
}

/** Milliseconds to the tenth: spans are timed to the microsecond, shown to 0.1 ms. */
const round = (ms: number) => Math.round(ms * 10) / 10;
