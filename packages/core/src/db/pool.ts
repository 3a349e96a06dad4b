import pg from 'pg';
import { pgConfig } from './pg-config.ts';
import type { Logger } from '../logger.ts';

export interface PoolOptions {
  /** Connections at most (PostgreSQL's connections are shared by every service). */
  max: number;
  /**
   * Also listen on every checked-out client: a connection killed while code holds a
   * client it checked out itself emits 'error' on that client, and without a listener
   * Node crashes the process (withTransaction listens on its own; the query in flight
   * rejects in any case).
   */
  watchCheckedOut?: boolean;
}

/**
 * A service's PostgreSQL pool: its schema first on the search_path, the session limits
 * and keepalive of pgConfig (a silent link fails its calls instead of pinning locks),
 * a 5 s connect timeout, and an 'error' listener, because an idle client losing its
 * connection must not crash the process (the pool replaces it).
 */
export function createPool(
  config: Parameters<typeof pgConfig>[0],
  log: Logger,
  { max, watchCheckedOut = false }: PoolOptions,
): pg.Pool {
  const pool = new pg.Pool({ ...pgConfig(config), max, connectionTimeoutMillis: 5_000 });
  pool.on('error', (error) => log.warn({ err: error }, 'idle PostgreSQL client error'));
  if (watchCheckedOut) {
    pool.on('connect', (client) =>
      client.on('error', (error) => log.warn({ err: error }, 'PostgreSQL connection lost')),
    );
  }
  return pool;
}
