import { outboxState } from '@outbox/core';
import { Partitioners } from 'kafkajs';
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

/** An outbox row the relay marked sent whose event the consumer never received. */
export interface SentNotDelivered {
  /** outbox.id (the event's id on the wire). */
  id: string;
  aggregateId: string;
  eventType: string;
  topic: string | null;
  /** When the relay marked it sent (Kafka had acknowledged it, with the relay's acks). */
  sentAt: string;
  /**
   * The partition the broker acknowledged it in (outbox.kafka_partition); for a row sent
   * without one recorded (through CDC, or before migration 000009), the partition its key
   * goes to (Java's murmur2 on aggregate_id, as the relay's partitioner).
   */
  partition: number;
  /**
   * The offset the broker acknowledged for it (outbox.kafka_offset, int64 as a decimal
   * string), or null when none was recorded. After an acks = 1 loss that offset was
   * truncated from the partition's log, and a later event now sits there.
   */
  offset: string | null;
}

/**
 * The rows behind a lost event: marked sent, older than `settleSeconds`, and never
 * delivered to the consumer. With acks = all and the consumer caught up this is empty;
 * with acks = 1 and a leader killed before its followers copied the batch, these are the
 * events the broker acknowledged and lost, with the partition and offset it gave them.
 * At most `limit` rows, oldest first, and the count.
 */
export async function sentNotDelivered(
  pool: Pool,
  options: { settleSeconds?: number; limit?: number; partitions?: number } = {},
): Promise<{ count: number; rows: SentNotDelivered[] }> {
  const { rows } = await pool.query<{
    id: string;
    aggregate_id: string;
    event_type: string;
    topic: string | null;
    sent_at: Date;
    kafka_partition: number | null;
    kafka_offset: string | null;
    total: number;
  }>(
    `SELECT x.id::text, x.aggregate_id, x.event_type, x.topic, x.sent_at, x.kafka_partition,
            x.kafka_offset::text, count(*) OVER ()::int AS total
       FROM outbox x
      WHERE ${outboxState('sent', 'x')}
        AND x.created_at < now() - make_interval(secs => $1::float8)
        AND NOT EXISTS (SELECT 1 FROM consumer_deliveries d WHERE d.event_id = x.id::text)
      ORDER BY x.id
      LIMIT $2`,
    [options.settleSeconds ?? 0, options.limit ?? 100],
  );
  const partitions = options.partitions ?? 6;
  return {
    count: rows[0]?.total ?? 0,
    rows: rows.map((r) => ({
      id: r.id,
      aggregateId: r.aggregate_id,
      eventType: r.event_type,
      topic: r.topic,
      sentAt: r.sent_at.toISOString(),
      partition: r.kafka_partition ?? keyPartition(r.aggregate_id, partitions),
      offset: r.kafka_offset,
    })),
  };
}

const partitioner = Partitioners.DefaultPartitioner();

/** The partition kafkajs' DefaultPartitioner (Java-compatible murmur2) gives `key`. */
function keyPartition(key: string, partitions: number): number {
  return partitioner({
    topic: '',
    partitionMetadata: Array.from({ length: partitions }, (_, i) => ({
      partitionErrorCode: 0,
      partitionId: i,
      leader: 0,
      replicas: [0],
      isr: [0],
    })),
    message: { key, value: null },
  });
}
