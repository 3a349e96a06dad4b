import { hostname } from 'node:os';
import {
  DEFAULT_FAILURE_BACKOFF_MAX_MS,
  DEFAULT_POLL_INTERVAL_MS,
  RelayTimingError,
  resolveRelayTimings,
} from '@outbox/core';
import { baseConfigSchema, envBoolean, envHost, envPort, parseConfig } from '@outbox/lab';
import { z } from 'zod';

/** publisher-worker's configuration: the lab's shared variables plus the relay's knobs. */
export const configSchema = baseConfigSchema.extend({
  /** HTTP port for /healthz and /metrics; 0 lets the OS pick (tests). */
  PORT: envPort(3002),
  HOST: envHost,
  /** Names this replica in outbox_relay_members; must differ between replicas. */
  REPLICA_ID: z
    .string()
    .min(1)
    .default(() => `worker-${hostname()}-${process.pid}`),
  /** Divide the 64 shards among replicas (FIFO per aggregate). The failure point can turn it off. */
  SHARDED: envBoolean.default(true),
  BATCH_SIZE: z.coerce.number().int().positive().default(500),
  /**
   * Pipelined relay: lanes per replica, each a serial loop over its part of the shards,
   * taking turns on the one producer (core's RelayOptions.lanes). 1 is the serial relay.
   */
  RELAY_LANES: z.coerce.number().int().min(1).max(8).default(1),
  /** Fallback poll when no NOTIFY arrives. */
  POLL_INTERVAL_MS: z.coerce.number().int().positive().default(DEFAULT_POLL_INTERVAL_MS),
  /** Cap of the wait after a failed tick (the wait itself reaches 1.2 × this). */
  FAILURE_BACKOFF_MAX_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(DEFAULT_FAILURE_BACKOFF_MAX_MS),
  /**
   * How long a replica's membership lasts without a heartbeat. Unset: twice the longest
   * silence, max(POLL_INTERVAL_MS, 1.2 × FAILURE_BACKOFF_MAX_MS) (10 s by default).
   */
  MEMBER_TTL_MS: z.coerce.number().int().positive().optional(),
  MAX_ATTEMPTS: z.coerce.number().int().positive().default(10),
  /**
   * /healthz answers 503 when the relay loop has completed no tick for this long. The
   * loop ticks at least once per poll interval (5 s) and backs off at most 10 s after a
   * failure; a produce may take up to 30 s: 60 s is past all of them.
   */
  RELAY_STALL_MS: z.coerce.number().int().min(1_000).default(60_000),
});

/** The relay's timing invariant (core's relay/timings.ts), checked with the rest. */
const checkedSchema = configSchema.superRefine((config, ctx) => {
  try {
    resolveRelayTimings({
      pollIntervalMs: config.POLL_INTERVAL_MS,
      failureBackoffMaxMs: config.FAILURE_BACKOFF_MAX_MS,
      memberTtlMs: config.MEMBER_TTL_MS,
    });
  } catch (error) {
    if (!(error instanceof RelayTimingError)) throw error;
    ctx.addIssue({
      code: 'custom',
      path: ['MEMBER_TTL_MS'],
      message: `does not fit POLL_INTERVAL_MS and FAILURE_BACKOFF_MAX_MS: ${error.message}`,
    });
  }
});
export type WorkerConfig = z.infer<typeof configSchema>;

/** Parses `env` once; throws one error naming every bad variable. The only reader of env. */
export function loadConfig(env: NodeJS.ProcessEnv): WorkerConfig {
  return parseConfig(checkedSchema, env);
}
