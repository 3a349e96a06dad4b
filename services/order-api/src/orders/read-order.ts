import type { Pool } from 'pg';

/**
 * An order's journey, for GET /orders/:id: the row, its outbox events (sent?
 * retried? dead-lettered?), what the consumer saw of them, and its reservations.
 * Returns undefined when the order does not exist.
 */
export async function readOrder(
  pool: Pool,
  orderId: string,
): Promise<Record<string, unknown> | undefined> {
  const [order, events, deliveries, reservations] = await Promise.all([
    pool.query(
      `SELECT id, user_id AS "userId", sku, quantity, status, seq, mode,
              created_at AS "createdAt", updated_at AS "updatedAt"
       FROM orders WHERE id = $1`,
      [orderId],
    ),
    pool.query(
      `SELECT id, event_type, event_version, created_at, sent_at, attempts, error,
              dead_lettered_at, topic
       FROM outbox WHERE aggregate_type = 'order' AND aggregate_id = $1 ORDER BY id`,
      [orderId],
    ),
    pool.query(
      `SELECT consumer, event_id, event_type, seq, outcome, kafka_partition, kafka_offset,
              fifo_violation, received_at
       FROM consumer_deliveries WHERE aggregate_id = $1 ORDER BY id`,
      [orderId],
    ),
    pool.query(
      `SELECT id, sku, quantity, event_id, released_at, created_at
       FROM reservations WHERE order_id = $1 ORDER BY id`,
      [orderId],
    ),
  ]);
  if (!order.rows[0]) return undefined;
  return {
    order: order.rows[0],
    events: events.rows,
    deliveries: deliveries.rows,
    reservations: reservations.rows,
  };
}
