import { OutboxError } from '../errors.ts';
import { BACKOFF_JITTER } from './backoff.ts';

/**
 * The relay's timings, which must fit together. A relay heartbeats into
 * `outbox_relay_members` when it ticks (ShardAssigner) and when it switches its
 * `sleeping` flag, and is silent in between: for at most one fallback poll while idle,
 * one failure backoff (with its jitter) while ticks fail. Peers (the shard split) and
 * writers (the wake-up trigger) take a member for dead once its heartbeat is older
 * than its TTL, which each member writes into its row. So:
 *
 *   memberTtlMs ≥ max(pollIntervalMs, failureBackoffMaxMs × 1.2) + MEMBER_TTL_MARGIN_MS
 *
 * Shorter, an idle or backing-off replica would look dead to its peers (shard sets
 * changing from tick to tick) and a sleeping relay would stop being notified.
 */
export interface RelayTimings {
  /** Fallback poll when no notification arrives. */
  pollIntervalMs: number;
  /** Cap of the wait after a failed tick (the wait itself reaches 1.2 × this). */
  failureBackoffMaxMs: number;
  /** A member silent for longer is taken for dead by its peers and by writers. */
  memberTtlMs: number;
}

export const DEFAULT_POLL_INTERVAL_MS = 5_000;
export const DEFAULT_FAILURE_BACKOFF_MAX_MS = 4_000;
/** What a heartbeat must outlast beyond the longest silence: the tick around it, under load. */
export const MEMBER_TTL_MARGIN_MS = 2_000;

/** The timings do not fit together (see RelayTimings); a configuration error. */
export class RelayTimingError extends OutboxError {
  constructor(
    message: string,
    readonly timings: { [K in keyof RelayTimings]?: number | undefined },
  ) {
    super(message, { retriable: false });
  }
}

/** The longest a running relay goes without a heartbeat: an idle poll or a failure backoff. */
export function longestSilenceMs(t: Omit<RelayTimings, 'memberTtlMs'>): number {
  return Math.max(t.pollIntervalMs, Math.ceil(t.failureBackoffMaxMs * (1 + BACKOFF_JITTER)));
}

/**
 * Fills in the defaults and checks the invariant; throws RelayTimingError naming the
 * values. Without an explicit TTL, it is twice the longest silence (10 s with the
 * defaults): one heartbeat may be missed, a crashed replica's shards move on soon.
 */
export function resolveRelayTimings(
  options: { [K in keyof RelayTimings]?: number | undefined } = {},
): RelayTimings {
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const failureBackoffMaxMs = options.failureBackoffMaxMs ?? DEFAULT_FAILURE_BACKOFF_MAX_MS;
  for (const [name, value] of Object.entries({
    pollIntervalMs,
    failureBackoffMaxMs,
    memberTtlMs: options.memberTtlMs ?? 1,
  })) {
    if (!Number.isFinite(value) || value <= 0)
      throw new RelayTimingError(`${name} must be a positive number of ms, got ${value}`, options);
  }
  const silence = longestSilenceMs({ pollIntervalMs, failureBackoffMaxMs });
  const minimum = silence + MEMBER_TTL_MARGIN_MS;
  const memberTtlMs = options.memberTtlMs ?? Math.max(2 * silence, minimum);
  if (memberTtlMs < minimum) {
    throw new RelayTimingError(
      `memberTtlMs ${memberTtlMs} is too short: a relay is silent for up to ${silence} ms ` +
        `(max(pollIntervalMs ${pollIntervalMs}, failureBackoffMaxMs ${failureBackoffMaxMs} × ${1 + BACKOFF_JITTER})), ` +
        `so its membership must last at least ${minimum} ms (+ ${MEMBER_TTL_MARGIN_MS} ms margin) ` +
        'or its peers and the wake-up trigger take it for dead while it sleeps or backs off',
      options,
    );
  }
  // Whole milliseconds: the row's ttl_ms is an integer.
  return { pollIntervalMs, failureBackoffMaxMs, memberTtlMs: Math.ceil(memberTtlMs) };
}
