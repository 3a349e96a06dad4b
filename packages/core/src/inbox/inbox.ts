import type { ClientBase } from 'pg';

/** Identifies one delivery of an event to one consumer. */
export interface InboxDelivery {
  /** The consumer's name: each consumer deduplicates on its own. */
  consumer: string;
  /** The event_id header (the outbox id). */
  eventId: string;
  topic: string;
  partition?: number;
  offset?: string;
}

export type InboxOutcome<T> = { status: 'processed'; result: T } | { status: 'duplicate' };

/**
 * The inbox: runs `fn` only if this consumer has not processed this event before.
 * Must be called inside the transaction that makes the business effect, so the
 * marker and the effect commit or roll back together (the seed's InventoryConsumer).
 * A duplicate returns `{ status: 'duplicate' }` without calling `fn`.
 */
export async function handleOnce<T>(
  client: ClientBase,
  delivery: InboxDelivery,
  fn: (client: ClientBase) => Promise<T>,
): Promise<InboxOutcome<T>> {
  const inserted = await client.query(
    `INSERT INTO inbox (consumer, event_id, topic, kafka_partition, kafka_offset)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (consumer, event_id) DO NOTHING`,
    [
      delivery.consumer,
      delivery.eventId,
      delivery.topic,
      delivery.partition ?? null,
      delivery.offset ?? null,
    ],
  );
  if (inserted.rowCount === 0) return { status: 'duplicate' };
  return { status: 'processed', result: await fn(client) };
}

/** The same as an object, for callers that prefer `inbox.handleOnce(...)`. */
export const inbox = { handleOnce };
