import { randomBytes } from 'node:crypto';
import { migrate } from '@outbox/core';
import { migrateLab } from '@outbox/lab';
import pg from 'pg';
import { inject, onTestFailed } from 'vitest';

/** The SKUs the demo's tests order; `stock` puts them in the inventory. */
export const TEST_SKUS = ['sku-1', 'sku-2', 'sku-3'];

export interface TestDb {
  schema: string;
  databaseUrl: string;
  pool: pg.Pool;
  /** Client config with the schema on the search_path (for LISTEN, child processes). */
  config: pg.ClientConfig;
  close(): Promise<void>;
}

export interface TestDbOptions {
  /**
   * Which migrations: the lab's (default: core's and the demo's tables), 'core' (the
   * pattern's tables only, as a team adopting core has them), or none (false, for tests
   * of the migrator itself).
   */
  migrate?: boolean | 'core';
  /** Stock TEST_SKUS with this many units each (services that reserve inventory). */
  stock?: number;
  /** Pool size (default 10). */
  max?: number;
  /** A PostgreSQL of the test's own (one it restarts) instead of the run's shared one. */
  databaseUrl?: string;
}

/**
 * A fresh schema, migrated, with a pool whose search_path points at it. Dropped on
 * close unless the test failed (then left behind for inspection, as pg-boss does).
 */
export async function createTestDb(options: TestDbOptions = {}): Promise<TestDb> {
  const databaseUrl = options.databaseUrl ?? inject('databaseUrl');
  const schema = `t_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const config: pg.ClientConfig = {
    connectionString: databaseUrl,
    options: `-c search_path=${schema}`,
  };
  const pool = new pg.Pool({ ...config, max: options.max ?? 10 });
  // A test that restarts or terminates backends must not crash the run.
  pool.on('error', () => undefined);
  if (options.migrate === 'core') await migrate(pool);
  else if (options.migrate !== false) await migrateLab(pool);
  if (options.stock !== undefined)
    await pool.query('INSERT INTO inventory (sku, available) SELECT unnest($1::text[]), $2', [
      TEST_SKUS,
      options.stock,
    ]);
  let failed = false;
  try {
    onTestFailed(() => {
      failed = true;
    });
  } catch {
    // Created in a beforeAll: no test to watch; the schema is dropped in any case.
  }
  return {
    schema,
    databaseUrl,
    pool,
    config,
    async close() {
      await pool.end();
      if (failed) return;
      const c = new pg.Client({ connectionString: databaseUrl });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}
