import { baseConfigSchema, byteSize, envHost, envPort, parseConfig } from '@outbox/lab';
import { z } from 'zod';

/** How an order's events leave the service: through the outbox, or the naive dual write. */
export const orderModes = ['outbox', 'naive'] as const;
export type OrderMode = (typeof orderModes)[number];

/**
 * How POST /orders writes an outbox-mode order without an Idempotency-Key:
 * - statement: the order and its event in one statement (core's appendWith): one
 *   round trip instead of four (bench --only api measures both in one run);
 * - transaction: BEGIN, INSERT order, append, COMMIT (core's withTransaction + append),
 *   the path every other request takes (naive mode, Idempotency-Key, transitions).
 */
export const writePaths = ['statement', 'transaction'] as const;
export type WritePath = (typeof writePaths)[number];

/** order-api's configuration: the lab's shared variables plus the HTTP ones. */
export const configSchema = baseConfigSchema.extend({
  /** 0 lets the OS pick a free port (tests); the chosen one is logged. */
  PORT: envPort(3001),
  HOST: envHost,
  /** Mode when neither the request nor the `order_mode` demo setting chooses one. */
  DEFAULT_MODE: z.enum(orderModes).default('outbox'),
  WRITE_PATH: z.enum(writePaths).default('statement'),
  /** Largest JSON body accepted (body-parser syntax: '16kb', '1mb', …). */
  BODY_LIMIT: z
    .string()
    .refine((s) => byteSize(s) !== undefined, 'a size like 16kb, 1mb or 4096')
    .default('16kb'),
});
export type AppConfig = z.infer<typeof configSchema>;

/** Parses `env` once; throws one error naming every bad variable. The only reader of env. */
export function loadConfig(env: NodeJS.ProcessEnv): AppConfig {
  return parseConfig(configSchema, env);
}
