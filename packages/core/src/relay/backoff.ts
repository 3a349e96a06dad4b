/** The spread of backoffMs around its value: ±20%, so a wait reaches 1.2 × the cap. */
export const BACKOFF_JITTER = 0.2;

/** Exponential backoff: `baseMs * 2^(attempt-1)`, capped, with ±BACKOFF_JITTER jitter. */
export function backoffMs(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random = Math.random,
): number {
  const raw = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(raw * (1 - BACKOFF_JITTER + 2 * BACKOFF_JITTER * random()));
}
