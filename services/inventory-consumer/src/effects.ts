import type { OrderEvent } from '@outbox/lab';
import type { ClientBase } from 'pg';

/**
 * The business effect of one event on the inventory, inside the caller's transaction.
 *
 * OrderCreated always records a reservation (the event is a fact: the order exists).
 * Stock moves from available to reserved only when enough is available, so
 * `available` never goes negative; a reservation that stock cannot back is recorded
 * as released at once (a rejected reservation), so a later cancel gives nothing back.
 * The reservation row is written either way: it is what shows double processing.
 */
export async function applyEffect(
  client: ClientBase,
  event: OrderEvent,
  eventId: string,
): Promise<void> {
  switch (event.eventType) {
    case 'OrderCreated': {
      const { orderId, sku, quantity } = event.payload;
      const moved = await client.query(
        `UPDATE inventory SET reserved = reserved + $2, available = available - $2
         WHERE sku = $1 AND available >= $2`,
        [sku, quantity],
      );
      await client.query(
        `INSERT INTO reservations (order_id, sku, quantity, event_id, released_at)
         VALUES ($1, $2, $3, $4, CASE WHEN $5 THEN NULL ELSE now() END)`,
        [orderId, sku, quantity, eventId, moved.rowCount === 1],
      );
      return;
    }
    case 'OrderCancelled': {
      // Release what is still held and give that stock back, in one statement.
      await client.query(
        `WITH released AS (
           UPDATE reservations SET released_at = now()
           WHERE order_id = $1 AND released_at IS NULL
           RETURNING sku, quantity
         ), per_sku AS (SELECT sku, sum(quantity)::int AS quantity FROM released GROUP BY sku)
         UPDATE inventory i SET reserved = i.reserved - p.quantity, available = i.available + p.quantity
         FROM per_sku p WHERE i.sku = p.sku`,
        [event.payload.orderId],
      );
      return;
    }
    case 'OrderPaid':
      // Nothing to do for stock; the delivery is still recorded by the caller.
      return;
  }
}
