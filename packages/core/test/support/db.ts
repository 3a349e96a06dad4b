import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject, onTestFailed } from 'vitest';
import { migrate } from '../../src/index.ts';

export interface TestDb {
  schema: string;
  pool: pg.Pool;
  /** Client config with the schema on the search_path (for LISTEN, child processes). */
  config: pg.ClientConfig;
  close(): Promise<void>;
}

/**
 * A fresh schema, migrated, with a pool whose search_path points at it. Dropped on
 * close unless the test failed (then left behind for inspection, as pg-boss does).
 */
export async function createTestDb(options: { migrate?: boolean } = {}): Promise<TestDb> {
  const databaseUrl = inject('databaseUrl');
  const schema = `t_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const config: pg.ClientConfig = {
    connectionString: databaseUrl,
    options: `-c search_path=${schema}`,
  };
  const pool = new pg.Pool({ ...config, max: 10 });
  pool.on('error', () => undefined);
  if (options.migrate !== false) await migrate(pool);
  let failed = false;
  onTestFailed(() => {
    failed = true;
  });
  return {
    schema,
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
