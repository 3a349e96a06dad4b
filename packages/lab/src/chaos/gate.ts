import type { Pool } from 'pg';
import {
  FailurePoints,
  type FailurePointName,
  type FailurePointState,
  type FailurePointsOptions,
} from './failure-points.ts';

/**
 * What a service asks of the failure points: whether one is on, and to fire one. With
 * chaos off (CHAOS_ENABLED unset, the default outside `npm run demo`) it is NO_CHAOS:
 * nothing is ever on, and no connection, LISTEN or poll exists for it.
 */
export interface FailurePointGate {
  start(): Promise<void>;
  stop(): Promise<void>;
  isActive(name: FailurePointName, now?: number): boolean;
  fire(name: FailurePointName): Promise<Record<string, unknown> | undefined>;
  state(name: FailurePointName): FailurePointState | undefined;
}

/** The gate of a service with chaos off: every failure point stays off, at no cost. */
export const NO_CHAOS: FailurePointGate = {
  start: () => Promise.resolve(),
  stop: () => Promise.resolve(),
  isActive: () => false,
  fire: () => Promise.resolve(undefined),
  state: () => undefined,
};

/** The service's failure points: followed (LISTEN and a 1 s poll) only when chaos is on. */
export function failurePointGate(
  chaosEnabled: boolean,
  pool: Pool,
  options: FailurePointsOptions,
): FailurePointGate {
  return chaosEnabled ? new FailurePoints(pool, options) : NO_CHAOS;
}
