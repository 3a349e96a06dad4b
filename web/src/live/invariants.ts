import type { Invariants } from '@outbox/dashboard-api/contract';

/**
 * broken: an invariant the outbox + inbox must keep is violated (red).
 * caught: the pattern is working: something went wrong and was handled (green badge).
 * warn: needs a human (dead letters).
 * info: a fact of at-least-once, neither good nor bad.
 */
export type Severity = 'ok' | 'broken' | 'caught' | 'warn' | 'info';

export interface InvariantTile {
  key: string;
  label: string;
  value: number;
  severity: Severity;
  /** One line under the number. */
  hint: string;
  /** The badge, when the severity's own word does not fit. */
  badge?: string;
}

const broken = (n: number): Severity => (n > 0 ? 'broken' : 'ok');

/** The counters, in the order a learner reads them. */
export function invariantTiles(inv: Invariants): InvariantTile[] {
  const deadLettered = inv.outboxDeadLettered + inv.consumerDeadLettered;
  const neverPublished = inv.neverPublished ?? inv.ordersWithoutEvents;
  const waiting = inv.publishedNotConsumed ?? 0;
  return [
    // "Orders without events" told apart: an event that never reached the topic is lost;
    // one on the topic that the consumer has not read is late (lag, a stalled consumer).
    // A server without the split counts them all as lost, as before.
    {
      key: 'neverPublished',
      label: 'Never published',
      value: neverPublished,
      severity: broken(neverPublished),
      hint: 'committed, no event on the topic: lost',
    },
    {
      key: 'publishedNotConsumed',
      label: 'Published, not consumed',
      value: waiting,
      severity: waiting > 0 ? 'warn' : 'ok',
      badge: 'late',
      hint: 'on the topic, the consumer behind: not lost',
    },
    {
      key: 'phantomEvents',
      label: 'Phantom events',
      value: inv.phantomEvents,
      severity: broken(inv.phantomEvents),
      hint: 'delivered for an order that does not exist',
    },
    {
      key: 'duplicatesDelivered',
      label: 'Duplicates delivered',
      value: inv.duplicatesDelivered,
      severity: inv.duplicatesDelivered > 0 ? 'info' : 'ok',
      hint: 'at-least-once: Kafka delivered an event again',
    },
    {
      key: 'duplicatesCaught',
      label: 'Duplicates caught by the inbox',
      value: inv.duplicatesCaught,
      severity: inv.duplicatesCaught > 0 ? 'caught' : 'ok',
      hint: 'skipped: event_id already in the inbox',
    },
    {
      key: 'doubleProcessed',
      label: 'Double-processed',
      value: inv.doubleProcessed,
      severity: broken(inv.doubleProcessed),
      hint: 'orders whose stock was reserved twice',
    },
    {
      key: 'fifoViolations',
      label: 'FIFO violations',
      value: inv.fifoViolations,
      severity: broken(inv.fifoViolations),
      hint: 'an event arrived behind a later one of its order',
    },
    {
      key: 'deadLettered',
      label: 'Dead-lettered',
      value: deadLettered,
      severity: deadLettered > 0 ? 'warn' : 'ok',
      hint: `outbox ${inv.outboxDeadLettered} · consumer ${inv.consumerDeadLettered}`,
    },
  ];
}
