import pg from 'pg';
import { migrate } from '@outbox/core';

/** A schema of its own for one scenario (or variant), with a pool on its search_path. */
export interface BenchSchema {
  name: string;
  pool: pg.Pool;
  /** Client config with the schema on the search_path (LISTEN clients, child processes). */
  config: pg.ClientConfig;
  drop(): Promise<void>;
}

/** Runs one statement on a short-lived connection (DDL on schemas, server facts). */
export async function adminQuery<T extends pg.QueryResultRow = pg.QueryResultRow>(
  databaseUrl: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Drops and re-creates `name`, optionally runs core's migrations in it. `drop()` ends
 * the pool and removes the schema: scenarios leave nothing behind.
 */
export async function createSchema(
  databaseUrl: string,
  name: string,
  { migrated = true, max = 10 }: { migrated?: boolean; max?: number } = {},
): Promise<BenchSchema> {
  await adminQuery(databaseUrl, `DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(name)} CASCADE`);
  await adminQuery(databaseUrl, `CREATE SCHEMA ${pg.escapeIdentifier(name)}`);
  const config: pg.ClientConfig = {
    connectionString: databaseUrl,
    options: `-c search_path=${name}`,
  };
  const pool = new pg.Pool({ ...config, max });
  pool.on('error', () => undefined);
  if (migrated) await migrate(pool);
  return {
    name,
    pool,
    config,
    async drop() {
      await pool.end();
      await adminQuery(databaseUrl, `DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(name)} CASCADE`);
    },
  };
}

/**
 * Vacuums and analyzes `tables`, then flushes dirty buffers, so that neither the
 * planner's statistics nor a checkpoint differ between the runs of a measurement.
 * Skipped in quick mode (nothing is measured there).
 */
export async function settle(pool: pg.Pool, quick: boolean, ...tables: string[]): Promise<void> {
  if (quick) return;
  for (const table of tables) await pool.query(`VACUUM ANALYZE ${table}`);
  await pool.query('CHECKPOINT');
}
