import pg from 'pg';
import { migrateLab } from '@outbox/lab';

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
  if (migrated) await migrateLab(pool);
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

/** Every schema the scenarios create (and drop when they end). */
export const BENCH_SCHEMAS = [
  'bench_ceilings',
  'bench_drain_ours',
  'bench_drain_seed',
  'bench_drain_peer',
  'bench_latency_ours',
  'bench_latency_seed',
  'bench_latency_peer',
  'bench_latency_consumer',
  'bench_wakeup_none',
  'bench_wakeup_seed',
  'bench_wakeup_ours',
  'bench_wakeup_ours_idle',
  'bench_api_plain',
  'bench_api_service',
  'bench_growth_0',
  'bench_growth_mid',
  'bench_growth_big',
  'bench_cleanup',
  'bench_inbox',
  'bench_marksent_update',
  'bench_marksent_queue',
  'bench_marksent_delete',
];

/** Drops what an interrupted run left behind (a 10M-row table is worth the look). */
export async function dropLeftovers(databaseUrl: string): Promise<string[]> {
  const rows = await adminQuery<{ name: string }>(
    databaseUrl,
    'SELECT nspname AS name FROM pg_namespace WHERE nspname = ANY($1::text[])',
    [BENCH_SCHEMAS],
  );
  for (const { name } of rows) {
    await adminQuery(databaseUrl, `DROP SCHEMA ${pg.escapeIdentifier(name)} CASCADE`);
  }
  return rows.map((r) => r.name);
}
