import { outboxState } from '@outbox/core';
import type { Pool } from 'pg';

/** The invariants of the demo, computed from PostgreSQL (and what the consumer saw of Kafka). */
export interface AuditReport {
  orders: number;
  /** Orders whose OrderCreated never reached the consumer and is not pending in the outbox. */
  ordersWithoutEvents: number;
  /** OrderCreated events delivered for an order that does not exist. */
  phantomEvents: number;
  /** Deliveries beyond the first of the same event. */
  duplicatesDelivered: number;
  /** Duplicates the inbox recognised and skipped. */
  duplicatesCaught: number;
  /** Orders whose stock was reserved more than once (must be 0 with the inbox on). */
  doubleProcessed: number;
  /** Deliveries that arrived behind a later event of the same aggregate. */
  fifoViolations: number;
  /** Messages the consumer sent to the dead-letter topic. */
  consumerDeadLettered: number;
  /** Outbox rows dead-lettered by the relay. */
  outboxDeadLettered: number;
  /** Reservations whose order is missing or differs (sku, quantity). */
  reservationMismatches: number;
  pending: number;
  lagSeconds: number;
}

export interface AuditOptions {
  /** Orders younger than this are in flight, not lost (default 0: judge all). */
  settleSeconds?: number;
}

/**
 * Computes the report in one round trip. Meant for the CLI, the tests and the end of
 * a soak; the dashboard keeps its own incremental counters.
 */
export async function audit(pool: Pool, options: AuditOptions = {}): Promise<AuditReport> {
  const { rows } = await pool.query<Record<keyof AuditReport, number>>(
    `SELECT
       (SELECT count(*) FROM orders)::int AS orders,
       (SELECT count(*) FROM orders o
         WHERE o.created_at < now() - make_interval(secs => $1::float8)
           AND NOT EXISTS (SELECT 1 FROM consumer_deliveries d
                           WHERE d.aggregate_id = o.id::text AND d.event_type = 'OrderCreated')
           AND NOT EXISTS (SELECT 1 FROM outbox x
                           WHERE x.aggregate_type = 'order' AND x.aggregate_id = o.id::text
                             AND x.event_type = 'OrderCreated' AND ${outboxState('unsent', 'x')}))::int AS "ordersWithoutEvents",
       (SELECT count(DISTINCT d.aggregate_id) FROM consumer_deliveries d
         WHERE d.event_type = 'OrderCreated'
           AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.id::text = d.aggregate_id))::int AS "phantomEvents",
       (SELECT count(*) - count(DISTINCT (consumer, event_id)) FROM consumer_deliveries)::int AS "duplicatesDelivered",
       (SELECT count(*) FROM consumer_deliveries WHERE outcome = 'duplicate')::int AS "duplicatesCaught",
       (SELECT count(*) FROM (SELECT order_id FROM reservations GROUP BY order_id HAVING count(*) > 1) t)::int AS "doubleProcessed",
       (SELECT count(*) FROM consumer_deliveries WHERE fifo_violation)::int AS "fifoViolations",
       (SELECT count(*) FROM consumer_dead_letters)::int AS "consumerDeadLettered",
       (SELECT count(*) FROM outbox WHERE ${outboxState('deadLettered')})::int AS "outboxDeadLettered",
       (SELECT count(*) FROM reservations r LEFT JOIN orders o ON o.id = r.order_id
         WHERE o.id IS NULL OR o.sku <> r.sku OR o.quantity <> r.quantity)::int AS "reservationMismatches",
       (SELECT count(*) FROM outbox WHERE ${outboxState('pending')})::int AS pending,
       COALESCE(EXTRACT(EPOCH FROM now() - (SELECT created_at FROM outbox
         WHERE ${outboxState('pending')} ORDER BY id LIMIT 1)), 0)::float8 AS "lagSeconds"`,
    [options.settleSeconds ?? 0],
  );
  return rows[0] as AuditReport;
}
