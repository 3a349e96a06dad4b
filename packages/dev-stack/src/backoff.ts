/** Restart delays: 200 ms doubling up to 5 s; a run of 30 s counts as healthy and resets it. */
export const BACKOFF = { initialMs: 200, maxMs: 5000, resetAfterMs: 30_000 } as const;

/** Delay before restart number `attempt` (0-based count of consecutive quick failures). */
export function backoffDelay(attempt: number): number {
  return Math.min(BACKOFF.initialMs * 2 ** attempt, BACKOFF.maxMs);
}
