import { randomUUID } from 'node:crypto';
import { OutboxWriter, withTransaction } from '@outbox/core';
import { validateEvent } from '@outbox/lab';
import type { Pool } from 'pg';

/**
 * The rows the services write, written the way they write them (same tables, same
 * transactions), for tests that need exact control over which anomaly happens. The
 * end-to-end suite (journey.test.ts) runs the real services instead.
 */
const writer = new OutboxWriter({ validate: validateEvent });

export interface CreatedOrder {
  orderId: string;
  /** The OrderCreated outbox row (outbox mode only). */
  outboxId?: string;
}

/** order-api's POST /orders: the order and (outbox mode) its event in one transaction. */
export async function createOrder(
  pool: Pool,
  {
    mode = 'outbox' as 'outbox' | 'naive',
    sku = 'sku-1',
    quantity = 1,
    orderId = randomUUID() as string,
  } = {},
): Promise<CreatedOrder> {
  return withTransaction(pool, async (tx) => {
    await tx.query(
      `INSERT INTO orders (id, user_id, sku, quantity, status, seq, mode)
       VALUES ($1, 7, $2, $3, 'created', 1, $4)`,
      [orderId, sku, quantity, mode],
    );
    if (mode === 'naive') return { orderId };
    const appended = await writer.append(tx, {
      aggregateType: 'order',
      aggregateId: orderId,
      eventType: 'OrderCreated',
      payload: { orderId, userId: 7, sku, quantity, seq: 1, source: 'api' },
    });
    return { orderId, outboxId: appended.id };
  });
}

/** The relay's markSent for these rows. */
export async function markSent(pool: Pool, ids: string[], topic = 'orders.events'): Promise<void> {
  await pool.query(`UPDATE outbox SET sent_at = now(), topic = $2 WHERE id = ANY($1::bigint[])`, [
    ids,
    topic,
  ]);
}

/** The relay's markFailed, with dead-lettering at once when `dead`. */
export async function markFailed(
  pool: Pool,
  id: string,
  error: string,
  dead: boolean,
): Promise<void> {
  await pool.query(
    `UPDATE outbox SET attempts = attempts + 1, error = $2,
            next_attempt_at = now() + interval '1 hour',
            dead_lettered_at = CASE WHEN $3 THEN now() END
      WHERE id = $1::bigint`,
    [id, error, dead],
  );
}

let offsets = 0;

export interface Delivery {
  orderId: string;
  eventId: string;
  eventType?: string;
  seq?: number;
  outcome?: 'processed' | 'duplicate' | 'reprocessed';
  fifoViolation?: boolean;
  sku?: string;
  quantity?: number;
}

/**
 * inventory-consumer's transaction for one delivery: the inbox row (first time), the
 * reservation (OrderCreated applied: processed, or reprocessed with the inbox off)
 * and the consumer_deliveries row.
 */
export async function deliver(pool: Pool, d: Delivery): Promise<void> {
  const outcome = d.outcome ?? 'processed';
  const eventType = d.eventType ?? 'OrderCreated';
  offsets += 1;
  await withTransaction(pool, async (tx) => {
    if (outcome !== 'duplicate') {
      await tx.query(
        `INSERT INTO inbox (consumer, event_id, topic, kafka_partition, kafka_offset)
         VALUES ('inventory', $1, 'orders.events', 0, $2) ON CONFLICT DO NOTHING`,
        [d.eventId, offsets],
      );
      if (eventType === 'OrderCreated') {
        await tx.query(
          `INSERT INTO reservations (order_id, sku, quantity, event_id) VALUES ($1, $2, $3, $4)`,
          [d.orderId, d.sku ?? 'sku-1', d.quantity ?? 1, d.eventId],
        );
      }
    }
    await tx.query(
      `INSERT INTO consumer_deliveries (consumer, event_id, event_type, aggregate_id, seq, topic,
                                        kafka_partition, kafka_offset, outcome, fifo_violation)
       VALUES ('inventory', $1, $2, $3, $4, 'orders.events', 0, $5, $6, $7)`,
      [d.eventId, eventType, d.orderId, d.seq ?? 1, offsets, outcome, d.fifoViolation ?? false],
    );
  });
}

/** inventory-consumer's dead letter for a message it could not handle. */
export async function deadLetter(pool: Pool, reason: string): Promise<void> {
  offsets += 1;
  await pool.query(
    `INSERT INTO consumer_dead_letters (consumer, topic, kafka_partition, kafka_offset, reason)
     VALUES ('inventory', 'orders.events', 0, $1, $2)`,
    [offsets, reason],
  );
}
