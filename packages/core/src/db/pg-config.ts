import type pg from 'pg';

/**
 * Why each default (a silent PostgreSQL link must not pin a relay's shards for long;
 * test: test/relay.half-open.test.ts, takeover within 30 s):
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

/** The session limits, named as the services' environment names them (milliseconds; 0: leave the server's). */
export interface DatabaseTimeouts {
  DATABASE_STATEMENT_TIMEOUT_MS: number;
  DATABASE_LOCK_TIMEOUT_MS: number;
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: number;
  DATABASE_QUERY_TIMEOUT_MS: number;
  DATABASE_KEEPALIVE_MS: number;
}

/** Where to connect: a connection string and the schema first on the search_path. */
export interface DatabaseTarget {
  DATABASE_URL: string;
  DATABASE_SCHEMA: string;
}

/**
 * pg client/pool config for a service: its schema first on the search_path, the
 * session limits (server side, sent at connect), the client-side query timeout and TCP
 * keepalive. Limits not given take DATABASE_TIMEOUT_DEFAULTS. Throws when the query
 * timeout would cut a statement the server is still allowed to run.
 */
export function pgConfig(config: DatabaseTarget & Partial<DatabaseTimeouts>): pg.ClientConfig {
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
