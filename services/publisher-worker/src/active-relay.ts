import type { Logger } from '@outbox/core';
import { readRelayAcks, readRelayMode, type ActiveRelay, type RelayAcksSetting } from '@outbox/lab';
import type { Pool } from 'pg';

export interface ActiveRelayFollower {
  /** The relay the demo's handover last recorded as publishing. */
  current(): ActiveRelay;
  /** The `relay_acks` setting ('all' unless the lesson asked for '1'). */
  acks(): RelayAcksSetting;
  stop(): void;
}

/**
 * Follows the `relay_active` and `relay_acks` demo settings by reading them every `everyMs` (one indexed
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
  let acks = await readRelayAcks(pool);
  let failing = false;
  const timer = setInterval(() => {
    Promise.all([readRelayMode(pool), readRelayAcks(pool)]).then(
      ([mode, wantedAcks]) => {
        if (mode.active.relay !== active.relay)
          log.info({ active: mode.active }, `the demo's active relay is now ${mode.active.relay}`);
        if (wantedAcks !== acks)
          log.warn({ acks: wantedAcks }, `the relay's acks are now ${wantedAcks}`);
        active = mode.active;
        acks = wantedAcks;
        failing = false;
      },
      (error: unknown) => {
        if (!failing) log.warn({ err: error }, 'could not read the active relay; keeping the last');
        failing = true;
      },
    );
  }, everyMs);
  timer.unref();
  return { current: () => active, acks: () => acks, stop: () => clearInterval(timer) };
}
