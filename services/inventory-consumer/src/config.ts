import { baseConfigSchema, envHost, envPort, parseConfig } from '@outbox/lab';
import { z } from 'zod';

/** inventory-consumer's configuration: the lab's shared variables plus its own. */
export const configSchema = baseConfigSchema
  .extend({
    /** HTTP port for /healthz and /metrics; 0 lets the OS pick (tests). */
    PORT: envPort(3004),
    HOST: envHost,
    /** The inbox deduplicates per consumer name (inbox, deliveries, seq tables). */
    CONSUMER_NAME: z.string().min(1).default('inventory'),
    /** Kafka consumer group; defaults to `${TOPIC_PREFIX}inventory`. */
    GROUP_ID: z.string().min(1).optional(),
    /**
     * /healthz: lag with no message applied (or, lag unknown, no fetch) for longer than
     * this is a stall (503). 30 s: three session timeouts, well past a rebalance.
     */
    CONSUMER_STALL_MS: z.coerce.number().int().min(1_000).default(30_000),
    /**
     * The most messages of one partition applied in one PostgreSQL transaction and
     * covered by one offset commit. 1 is the seed's one-transaction-per-message
     * consumer (~300 events/s here); the bench's consumer scenario measures both.
     */
    CONSUMER_BATCH_MAX: z.coerce.number().int().min(1).max(10_000).default(100),
    /** How often /healthz's view of the group's lag is read from Kafka. */
    CONSUMER_LAG_PROBE_MS: z.coerce.number().int().min(100).default(2_000),
  })
  .transform((c) => ({ ...c, GROUP_ID: c.GROUP_ID ?? `${c.TOPIC_PREFIX}inventory` }));
export type ConsumerConfig = z.infer<typeof configSchema>;

/** Parses `env` once; throws one error naming every bad variable. The only reader of env. */
export function loadConfig(env: NodeJS.ProcessEnv): ConsumerConfig {
  return parseConfig(configSchema, env);
}
