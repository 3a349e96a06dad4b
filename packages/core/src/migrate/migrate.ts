import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Pool, QueryConfig } from 'pg';
import { withTransaction } from '../db/transaction.ts';

const defaultDir = fileURLToPath(new URL('../../sql/', import.meta.url));

// An arbitrary, fixed key: every process migrating this database queues on it.
const MIGRATION_LOCK_KEY = 727_001;

// pg's query_timeout of the service (DATABASE_QUERY_TIMEOUT_MS) cut at 35 s; a query's
// own timeout replaces it (0 would fall back to the pool's): a day, as good as none.
const MIGRATION_QUERY_TIMEOUT_MS = 86_400_000;

function unhurried(text: string, values?: unknown[]): QueryConfig {
  const query: QueryConfig & { query_timeout: number } = {
    text,
    values,
    query_timeout: MIGRATION_QUERY_TIMEOUT_MS,
  };
  return query;
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Reads `NNNNNN_name.sql` files of a folder, in version order. */
export async function loadMigrations(dir = defaultDir): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d+_.+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => ({
      version: Number.parseInt(file, 10),
      name: file,
      sql: await readFile(`${dir}/${file}`, 'utf8'),
    })),
  );
}

/**
 * Applies the pending migrations in order, each in its own transaction that first
 * records its version. A transaction-level advisory lock serialises processes that
 * migrate at the same time: the second waits, then sees the version recorded and
 * skips it. Tables are created in the connection's current schema (search_path).
 *
 * @returns the versions applied by this call.
 */
export async function migrate(pool: Pool, migrations?: Migration[]): Promise<number[]> {
  const all = migrations ?? (await loadMigrations());
  const applied: number[] = [];
  for (const migration of all) {
    const ran = await withTransaction(pool, async (client) => {
      // The service's session limits are for its runtime work: a migration may build an
      // index for minutes, and a second process waits here for the first one's.
      await client.query('SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0');
      await client.query(
        unhurried('SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))', [
          MIGRATION_LOCK_KEY,
        ]),
      );
      await client.query(
        `CREATE TABLE IF NOT EXISTS outbox_migrations (
           version    INT PRIMARY KEY,
           name       TEXT NOT NULL,
           applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
         )`,
      );
      const recorded = await client.query(
        'INSERT INTO outbox_migrations (version, name) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [migration.version, migration.name],
      );
      if (recorded.rowCount === 0) return false;
      await client.query(unhurried(migration.sql));
      return true;
    });
    if (ran) applied.push(migration.version);
  }
  return applied;
}
