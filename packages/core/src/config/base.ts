import type pg from 'pg';
import { z } from 'zod';
import { parseKafkaRoutes } from '../kafka/routes.ts';

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
   * kafka/routes.ts). Never needed in production.
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

/** pg client/pool config for a service: its schema first on the search_path. */
export function pgConfig(
  config: Pick<BaseConfig, 'DATABASE_URL' | 'DATABASE_SCHEMA'>,
): pg.ClientConfig {
  return {
    connectionString: config.DATABASE_URL,
    options: `-c search_path=${config.DATABASE_SCHEMA}`,
  };
}

/** The demo's topics: the seed's `orders.events`, and the consumer's dead-letter topic. */
export function demoTopics(prefix = ''): { orders: string; deadLetter: string } {
  return { orders: `${prefix}orders.events`, deadLetter: `${prefix}orders.events.dlq` };
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
