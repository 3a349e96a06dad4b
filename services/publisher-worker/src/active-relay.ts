import type { Logger } from '@outbox/core';
import { readRelayMode, type ActiveRelay } from '@outbox/lab';
import type { Pool } from 'pg';

export interface ActiveRelayFollower {
  /** The relay the demo's handover last recorded as publishing. */
  current(): ActiveRelay;
  stop(): void;
}

/**
 * Follows the `relay_active` demo setting by reading it every `everyMs` (one indexed
 * read: cheaper to reason about than a LISTEN connection of its own). A failed read
 * keeps the last value: while PostgreSQL is unreachable neither the relay nor the
 * confirmer can do anything anyway.
 */
export async function followActiveRelay(
  pool: Pool,
  log: Logger,
  everyMs = 500,
): Promise<ActiveRelayFollower> {
  let active = (await readRelayMode(pool)).active;
  let failing = false;
  const timer = setInterval(() => {
    readRelayMode(pool).then(
      (mode) => {
        if (mode.active.relay !== active.relay)
          log.info({ active: mode.active }, `the demo's active relay is now ${mode.active.relay}`);
        active = mode.active;
        failing = false;
      },
      (error: unknown) => {
        if (!failing) log.warn({ err: error }, 'could not read the active relay; keeping the last');
        failing = true;
      },
    );
  }, everyMs);
  timer.unref();
  return { current: () => active, stop: () => clearInterval(timer) };
}
