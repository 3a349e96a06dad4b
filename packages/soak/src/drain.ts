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

/** How often the drain looks: the anti-join over the whole outbox is not free. */
const DRAIN_POLL_MS = 2_000;

/**
 * Waits until nothing is on its way, polling (the database may still be coming back
 * from a restart: a failed poll is a try, not an error). Reports the backlog every
 * `progressEveryMs` through `progress`, with the rate it is going down at. Returns how
 * long it took.
 */
export async function waitDrained(
  pool: Pool,
  timeoutMs: number,
  progress: (line: string) => void = () => undefined,
  progressEveryMs = 15_000,
): Promise<{ ms: number; last: Backlog | undefined }> {
  const started = Date.now();
  let last: Backlog | undefined;
  let reported: { at: number; left: number } | undefined;
  for (;;) {
    last = (await backlog(pool).catch(() => undefined)) ?? last;
    const now = Date.now();
    if (last && last.pending === 0 && last.undelivered === 0) return { ms: now - started, last };
    if (now - started > timeoutMs) return { ms: now - started, last };
    if (last && (!reported || now - reported.at >= progressEveryMs)) {
      const left = last.pending + last.undelivered;
      const rate = reported ? ((reported.left - left) * 1000) / (now - reported.at) : undefined;
      progress(
        `  draining: ${last.pending} in the outbox, ${last.undelivered} sent and not applied` +
          (rate === undefined ? '' : ` (${Math.round(rate)}/s)`) +
          `, ${Math.round((now - started) / 1000)} s in`,
      );
      reported = { at: now, left };
    }
    await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
  }
}
