import { setTimeout as sleep } from 'node:timers/promises';

/** Options for {@link waitFor}. */
export interface WaitOptions {
  /** What is awaited, for the timeout message. */
  what: string;
  timeoutMs: number;
  intervalMs?: number;
  /** Extra hint appended to the timeout error (e.g. which log file to read). */
  hint?: string;
  /** Checked between attempts; a string aborts the wait with that message (e.g. child died). */
  abort?: () => string | undefined;
}

/**
 * Polls `probe` until it resolves to a value other than undefined/false, or throws a timeout
 * error carrying the last probe error: readiness of servers is only knowable by asking them.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false>,
  opts: WaitOptions,
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError: unknown;
  for (;;) {
    const aborted = opts.abort?.();
    if (aborted) throw new Error(`${opts.what}: ${aborted}${opts.hint ? ` (${opts.hint})` : ''}`);
    try {
      const result = await probe();
      if (result !== undefined && result !== false) return result;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const last = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
      const hint = opts.hint ? ` (${opts.hint})` : '';
      throw new Error(
        `Timed out after ${opts.timeoutMs} ms waiting for ${opts.what}${last}${hint}`,
      );
    }
    await sleep(opts.intervalMs ?? 250);
  }
}
