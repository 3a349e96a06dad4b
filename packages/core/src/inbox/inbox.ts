import { context, trace, type Context } from '@opentelemetry/api';
import type { ClientBase } from 'pg';
import { ATTR, failSpan, tracer } from '../tracing.ts';

/** Identifies one delivery of an event to one consumer. */
export interface InboxDelivery {
  /** The consumer's name: each consumer deduplicates on its own. */
  consumer: string;
  /** The event_id header (the outbox id). */
  eventId: string;
  topic: string;
  partition?: number;
  offset?: string;
  /**
   * The parent of this delivery's `inbox.check` span, e.g. the consumer's span of the
   * message (default: the active context).
   */
  traceContext?: Context;
}

export type InboxOutcome<T> = { status: 'processed'; result: T } | { status: 'duplicate' };

const inboxKey = (consumer: string, eventId: string): string => JSON.stringify([consumer, eventId]);

/**
 * Writes the inbox markers of many deliveries in one statement and tells, for each, whether
 * it is new: true when this consumer had not processed the event before. A delivery that
 * repeats an earlier one of the same call is not new either (Kafka can hand a consumer the
 * same event twice in one batch). Must run inside the transaction of the effects, like
 * handleOnce. One statement for a whole chunk of messages instead of one per message is
 * what lets a consumer apply a backlog at the rate it is published (issue 10's soak).
 */
export async function claimInbox(
  client: ClientBase,
  deliveries: readonly InboxDelivery[],
): Promise<boolean[]> {
  const firsts = new Map<string, InboxDelivery>();
  for (const d of deliveries) {
    const key = inboxKey(d.consumer, d.eventId);
    if (!firsts.has(key)) firsts.set(key, d);
  }
  if (firsts.size === 0) return [];
  const rows = [...firsts.values()];
  // One `inbox.check` span per delivery, all timed by the one statement that decides them.
  const spans = deliveries.map((d) =>
    tracer.startSpan(
      'inbox.check',
      {
        attributes: {
          [ATTR.inboxConsumer]: d.consumer,
          [ATTR.eventId]: d.eventId,
          'messaging.destination.name': d.topic,
          ...(deliveries.length > 1 ? { 'messaging.batch.message_count': deliveries.length } : {}),
        },
      },
      d.traceContext ?? context.active(),
    ),
  );
  // For one delivery the statement runs inside its span (a pg span nests under it); a
  // chunk's statement belongs to all of them and stays in the caller's context.
  const scope = spans.length === 1 ? trace.setSpan(context.active(), spans[0]!) : context.active();
  let inserted: { consumer: string; event_id: string }[];
  try {
    inserted = await context.with(scope, () => insertMarkers(client, rows));
  } catch (error) {
    for (const span of spans) failSpan(span, error);
    throw error;
  }
  const fresh = new Set(inserted.map((r) => inboxKey(r.consumer, r.event_id)));
  return deliveries.map((d, i) => {
    const key = inboxKey(d.consumer, d.eventId);
    const isNew = firsts.get(key) === d && fresh.has(key);
    spans[i]!.setAttribute(ATTR.inboxDuplicate, !isNew);
    spans[i]!.end();
    return isNew;
  });
}

async function insertMarkers(
  client: ClientBase,
  rows: InboxDelivery[],
): Promise<{ consumer: string; event_id: string }[]> {
  const { rows: inserted } = await client.query<{ consumer: string; event_id: string }>(
    `INSERT INTO inbox (consumer, event_id, topic, kafka_partition, kafka_offset)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::bigint[])
     ON CONFLICT (consumer, event_id) DO NOTHING
     RETURNING consumer, event_id`,
    [
      rows.map((d) => d.consumer),
      rows.map((d) => d.eventId),
      rows.map((d) => d.topic),
      rows.map((d) => d.partition ?? null),
      rows.map((d) => d.offset ?? null),
    ],
  );
  return inserted;
}

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
  const [fresh] = await claimInbox(client, [delivery]);
  if (!fresh) return { status: 'duplicate' };
  return { status: 'processed', result: await fn(client) };
}

/**
 * handleOnce for a chunk of deliveries, in one transaction: all markers in one statement
 * (claimInbox), then `fn` for each new delivery, in the order given. If `fn` throws, the
 * caller's transaction must roll back: markers and effects go together.
 */
export async function handleEachOnce<D extends InboxDelivery, T>(
  client: ClientBase,
  deliveries: readonly D[],
  fn: (client: ClientBase, delivery: D) => Promise<T>,
): Promise<InboxOutcome<T>[]> {
  const fresh = await claimInbox(client, deliveries);
  const outcomes: InboxOutcome<T>[] = [];
  for (const [i, delivery] of deliveries.entries())
    outcomes.push(
      fresh[i]
        ? { status: 'processed', result: await fn(client, delivery) }
        : { status: 'duplicate' },
    );
  return outcomes;
}

/** The same as an object, for callers that prefer `inbox.handleOnce(...)`. */
export const inbox = { handleOnce, handleEachOnce, claimInbox };
