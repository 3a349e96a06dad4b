import type pg from 'pg';
import { z } from 'zod';
import { parseKafkaRoutes } from '../kafka/routes.ts';

/**
 * Why each default (a silent PostgreSQL link must not pin a relay's shards for long;
 * test: packages/core/test/relay.half-open.test.ts, takeover within 30 s):
 * - idle in transaction 15 s: the server ends a session whose client stopped talking
 *   mid-transaction, releasing its shard and row locks. A relay's transaction idles
 *   while Kafka acknowledges a batch: a produce slower than this loses the claim and
 *   the batch is published again (a duplicate, never a loss).
 * - statement 30 s and lock 10 s: no statement of the services runs near them; a lock
 *   wait that long is a stuck peer, and the caller's retry is better than waiting.
 * - query 35 s (client side, above the statement timeout so the server cancels first):
 *   a call into a silent link rejects instead of hanging; the client is then destroyed.
 * - keepalive 10 s: TCP probes after 10 s of silence, from the client and (per
 *   session) from the server, for a peer that vanished without a FIN or RST.
 */
export const DATABASE_TIMEOUT_DEFAULTS = {
  statementTimeoutMs: 30_000,
  lockTimeoutMs: 10_000,
  idleInTransactionTimeoutMs: 15_000,
  queryTimeoutMs: 35_000,
  keepAliveMs: 10_000,
} as const;

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

type DatabaseTimeouts = Pick<
  BaseConfig,
  | 'DATABASE_STATEMENT_TIMEOUT_MS'
  | 'DATABASE_LOCK_TIMEOUT_MS'
  | 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS'
  | 'DATABASE_QUERY_TIMEOUT_MS'
  | 'DATABASE_KEEPALIVE_MS'
>;

/**
 * pg client/pool config for a service: its schema first on the search_path, the
 * session limits (server side, sent at connect), the client-side query timeout and TCP
 * keepalive. Limits not given take DATABASE_TIMEOUT_DEFAULTS. Throws when the query
 * timeout would cut a statement the server is still allowed to run.
 */
export function pgConfig(
  config: Pick<BaseConfig, 'DATABASE_URL' | 'DATABASE_SCHEMA'> & Partial<DatabaseTimeouts>,
): pg.ClientConfig {
  const d = DATABASE_TIMEOUT_DEFAULTS;
  const statementMs = config.DATABASE_STATEMENT_TIMEOUT_MS ?? d.statementTimeoutMs;
  const lockMs = config.DATABASE_LOCK_TIMEOUT_MS ?? d.lockTimeoutMs;
  const idleMs = config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS ?? d.idleInTransactionTimeoutMs;
  const queryMs = config.DATABASE_QUERY_TIMEOUT_MS ?? d.queryTimeoutMs;
  const keepAliveMs = config.DATABASE_KEEPALIVE_MS ?? d.keepAliveMs;
  if (queryMs > 0 && queryMs <= Math.max(statementMs, lockMs)) {
    throw new Error(
      `invalid configuration:\n  DATABASE_QUERY_TIMEOUT_MS (${queryMs}) must exceed ` +
        `DATABASE_STATEMENT_TIMEOUT_MS (${statementMs}) and DATABASE_LOCK_TIMEOUT_MS (${lockMs}), ` +
        'or be 0: the server must cancel a slow statement before the client gives up on the link',
    );
  }
  const options = [`-c search_path=${config.DATABASE_SCHEMA}`];
  // The server's own probes, per session: a client that vanished mid-transaction (a
  // produce in flight, a LISTEN) loses its session after about 4 × the interval.
  if (keepAliveMs > 0) {
    const seconds = Math.max(1, Math.round(keepAliveMs / 1000));
    options.push(
      `-c tcp_keepalives_idle=${seconds}`,
      `-c tcp_keepalives_interval=${seconds}`,
      '-c tcp_keepalives_count=3',
    );
  }
  return {
    connectionString: config.DATABASE_URL,
    options: options.join(' '),
    // pg sends these at connect (startup parameters), so they hold from the first
    // statement; 0 is not sent and leaves the server's or the role's setting.
    statement_timeout: statementMs,
    lock_timeout: lockMs,
    idle_in_transaction_session_timeout: idleMs,
    query_timeout: queryMs,
    keepAlive: keepAliveMs > 0,
    keepAliveInitialDelayMillis: keepAliveMs,
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
