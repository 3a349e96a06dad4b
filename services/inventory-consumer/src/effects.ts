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
      // One statement: the stock moves if it can, and the reservation records whether it did.
      await client.query(
        `WITH moved AS (
           UPDATE inventory SET reserved = reserved + $3, available = available - $3
           WHERE sku = $2 AND available >= $3
           RETURNING sku
         )
         INSERT INTO reservations (order_id, sku, quantity, event_id, released_at)
         SELECT $1::uuid, $2::text, $3::int, $4::text,
                CASE WHEN EXISTS (SELECT FROM moved) THEN NULL ELSE now() END`,
        [orderId, sku, quantity, eventId],
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
