import { z } from 'zod';
import { DATABASE_TIMEOUT_DEFAULTS } from '@outbox/core';
import { parseKafkaRoutes } from '../chaos/kafka-routes.ts';

/** 'true' / 'false' from the environment (z.coerce.boolean would read 'false' as true). */
export const envBoolean = z.enum(['true', 'false']).transform((s) => s === 'true');

/** A service's HTTP port: 0 lets the OS pick a free one (tests); the chosen one is logged. */
export const envPort = (fallback: number) =>
  z.coerce.number().int().min(0).max(65_535).default(fallback);

/** The address a service listens on: loopback unless told otherwise. */
export const envHost = z.string().min(1).default('127.0.0.1');

const milliseconds = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

/**
 * Configuration every service shares, parsed once from `env` (nothing else reads
 * process.env). Defaults make `npm run demo` work; errors name the variable.
 */
export const baseConfigSchema = z.object({
  DATABASE_URL: z.string().min(1, 'DATABASE_URL is required (postgres://user@host:port/db)'),
  /** Schema on the search_path: lets several stacks (tests) share one database. */
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$/, 'DATABASE_SCHEMA must be a plain lower-case identifier')
    .default('public'),
  /**
   * Limits on each session of a service, so that a client gone silent (a half-open
   * link) cannot pin locks for the ~2 h the kernel takes to notice. In milliseconds;
   * 0 leaves the server's (or the role's) setting. See DATABASE_TIMEOUT_DEFAULTS.
   */
  DATABASE_STATEMENT_TIMEOUT_MS: milliseconds(DATABASE_TIMEOUT_DEFAULTS.statementTimeoutMs),
  DATABASE_LOCK_TIMEOUT_MS: milliseconds(DATABASE_TIMEOUT_DEFAULTS.lockTimeoutMs),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: milliseconds(
    DATABASE_TIMEOUT_DEFAULTS.idleInTransactionTimeoutMs,
  ),
  DATABASE_QUERY_TIMEOUT_MS: milliseconds(DATABASE_TIMEOUT_DEFAULTS.queryTimeoutMs),
  DATABASE_KEEPALIVE_MS: milliseconds(DATABASE_TIMEOUT_DEFAULTS.keepAliveMs),
  KAFKA_BROKERS: z
    .string()
    .min(1, 'KAFKA_BROKERS is required (host:port[,host:port…])')
    .transform((s) =>
      s
        .split(',')
        .map((b) => b.trim())
        .filter(Boolean),
    ),
  /**
   * Managed Kafka: TLS to the brokers ('true' uses the system CAs; KAFKA_SSL_CA_FILE adds
   * a CA in PEM) and SASL (PLAIN or SCRAM) with a user and password. Off by default.
   */
  KAFKA_SSL: z.enum(['true', 'false']).default('false'),
  KAFKA_SSL_CA_FILE: z.string().min(1).optional(),
  KAFKA_SASL_MECHANISM: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).optional(),
  KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
  /**
   * Lab and tests only, off when unset: `broker=proxy,…` (each host:port) makes the
   * service dial a fault proxy instead of a broker's advertised address (see
   * chaos/kafka-routes.ts). Never needed in production.
   */
  KAFKA_ROUTES: z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (!text?.trim()) return undefined;
      try {
        return parseKafkaRoutes(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /**
   * The lab's failure points and faulty sockets, on only when asked ('true': `npm run
   * demo` and the tests that break things set it). Off, a service opens no failure-point
   * connection, polls nothing and dials Kafka with plain sockets.
   */
  CHAOS_ENABLED: envBoolean.default(false),
  /** Prefix of every topic name (tests isolate themselves with it). */
  TOPIC_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._-]*$/)
    .default(''),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});
export type BaseConfig = z.infer<typeof baseConfigSchema>;

/** Parses `env` with `schema`; throws one error listing every bad variable. */
export function parseConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
  throw new Error(`invalid configuration:\n${lines.join('\n')}`);
}

/** Hides the password of a connection string for logs. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
  }
}
