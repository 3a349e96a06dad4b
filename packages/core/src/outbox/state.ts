/**
 * The states of an outbox row, in SQL, named once. Everything that asks "which rows
 * are pending?" uses these, so the relay, the metrics, ops and the dashboard agree,
 * and the planner can use the partial indexes of migration 000001, whose predicates
 * these imply (outbox_pending_idx, outbox_pending_shard_idx: pending; outbox_blocking_idx:
 * failing and dead-lettered rows).
 *
 *   pending       not sent, not dead-lettered: the relay will send it (failing rows too)
 *   failing       pending after a failed attempt
 *   deadLettered  given up after MAX_ATTEMPTS (or refused for good): waits for requeue
 *   blocking      failing or dead-lettered: it holds back its aggregate's later rows
 *   sent          on the topic (sent_at is when it was marked)
 *   unsent        not on the topic: pending or dead-lettered (what an audit counts)
 *
 * A dead-lettered row has attempts > 0 (markFailed counts every attempt; requeue resets
 * both): said in its predicate, so that it can use outbox_blocking_idx.
 */
export type OutboxState = 'pending' | 'failing' | 'deadLettered' | 'blocking' | 'sent' | 'unsent';

const predicates: Record<OutboxState, (c: (column: string) => string) => string> = {
  pending: (c) => `${c('sent_at')} IS NULL AND ${c('dead_lettered_at')} IS NULL`,
  failing: (c) =>
    `${c('sent_at')} IS NULL AND ${c('dead_lettered_at')} IS NULL AND ${c('attempts')} > 0`,
  deadLettered: (c) =>
    `${c('sent_at')} IS NULL AND ${c('attempts')} > 0 AND ${c('dead_lettered_at')} IS NOT NULL`,
  blocking: (c) => `${c('sent_at')} IS NULL AND ${c('attempts')} > 0`,
  sent: (c) => `${c('sent_at')} IS NOT NULL`,
  unsent: (c) => `${c('sent_at')} IS NULL`,
};

/**
 * The SQL condition for rows in `state`, on the outbox's columns as `alias.column`
 * when an alias is given: `WHERE ${outboxState('pending')}`, `${outboxState('failing', 'b')}`.
 */
export function outboxState(state: OutboxState, alias?: string): string {
  return predicates[state]((column) => (alias ? `${alias}.${column}` : column));
}
