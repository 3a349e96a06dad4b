import { randomUUID } from 'node:crypto';
import { withTransaction } from '@outbox/core';
import type { Pool } from 'pg';

/**
 * Live traffic while the ticks are measured, written as the services write it: every
 * 100 ms a batch of orders + outbox rows commits (order-api), the previous batch is
 * marked sent (relay) and delivered, recorded in the inbox and reserved (consumer).
 * The tick then has new rows to tail on every read.
 */
export function startLoad(
  pool: Pool,
  perSecond: number,
): { stop(): Promise<void>; written: () => number } {
  let previous: { orderId: string; outboxId: string }[] = [];
  let written = 0;
  let running: Promise<void> = Promise.resolve();
  const perBatch = Math.max(1, Math.round(perSecond / 10));
  const batch = async () => {
    const created = await withTransaction(pool, async (tx) => {
      const out: { orderId: string; outboxId: string }[] = [];
      for (let i = 0; i < perBatch; i += 1) {
        const orderId = randomUUID();
        await tx.query(
          `INSERT INTO orders (id, user_id, sku, quantity, status, seq, mode)
           VALUES ($1, 1, 'sku-1', 1, 'created', 1, 'outbox')`,
          [orderId],
        );
        const { rows } = await tx.query<{ id: string }>(
          `INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)
           VALUES ('order', $1, 'OrderCreated', jsonb_build_object('orderId', $1::text)) RETURNING id`,
          [orderId],
        );
        out.push({ orderId, outboxId: rows[0]!.id });
      }
      return out;
    });
    const sent = previous;
    previous = created;
    written += created.length;
    if (sent.length === 0) return;
    await pool.query(
      "UPDATE outbox SET sent_at = now(), topic = 'orders.events' WHERE id = ANY($1::bigint[])",
      [sent.map((s) => s.outboxId)],
    );
    await withTransaction(pool, async (tx) => {
      const eventIds = sent.map((s) => s.outboxId);
      const orderIds = sent.map((s) => s.orderId);
      await tx.query(
        `INSERT INTO inbox (consumer, event_id, topic, kafka_partition, kafka_offset)
         SELECT 'inventory', e, 'orders.events', 0, 0 FROM unnest($1::text[]) e`,
        [eventIds],
      );
      await tx.query(
        `INSERT INTO reservations (order_id, sku, quantity, event_id)
         SELECT o, 'sku-1', 1, e FROM unnest($1::uuid[], $2::text[]) AS t(o, e)`,
        [orderIds, eventIds],
      );
      await tx.query(
        `INSERT INTO consumer_deliveries (consumer, event_id, event_type, aggregate_id, seq, topic,
                                          kafka_partition, kafka_offset, outcome)
         SELECT 'inventory', e, 'OrderCreated', o::text, 1, 'orders.events', 0, 0, 'processed'
           FROM unnest($1::uuid[], $2::text[]) AS t(o, e)`,
        [orderIds, eventIds],
      );
    });
  };
  const timer = setInterval(() => {
    running = running.then(batch).catch((error: Error) => {
      process.stderr.write(`load: ${error.message}\n`);
    });
  }, 100);
  return {
    written: () => written,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
