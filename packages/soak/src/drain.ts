import { outboxState } from '@outbox/core';
import type { Pool } from 'pg';

export interface Backlog {
  /** Outbox events not sent yet (and not dead-lettered). */
  pending: number;
  /** Sent events the consumer has not recorded a delivery of. */
  undelivered: number;
}

/** What is still on its way: in the outbox, or between Kafka and the consumer. */
export async function backlog(pool: Pool): Promise<Backlog> {
  const { rows } = await pool.query<Backlog>(
    `SELECT (SELECT count(*) FROM outbox WHERE ${outboxState('pending')})::int AS pending,
            (SELECT count(*) FROM outbox o WHERE o.sent_at IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM consumer_deliveries d WHERE d.event_id = o.id::text))::int AS undelivered`,
  );
  return rows[0]!;
}

/**
 * Waits until nothing is on its way, polling (the database may still be coming back
 * from a restart: a failed poll is a try, not an error). Returns how long it took.
 */
export async function waitDrained(
  pool: Pool,
  timeoutMs: number,
): Promise<{ ms: number; last: Backlog | undefined }> {
  const started = Date.now();
  let last: Backlog | undefined;
  for (;;) {
    last = await backlog(pool).catch(() => undefined);
    if (last && last.pending === 0 && last.undelivered === 0)
      return { ms: Date.now() - started, last };
    if (Date.now() - started > timeoutMs) return { ms: Date.now() - started, last };
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
