import { randomBytes } from 'node:crypto';
import { migrate } from '@outbox/core';
import pg from 'pg';
import { inject, onTestFailed } from 'vitest';

export interface TestDb {
  schema: string;
  databaseUrl: string;
  pool: pg.Pool;
  close(): Promise<void>;
}

/**
 * A fresh schema, migrated, with a pool whose search_path points at it. Dropped on
 * close unless the test failed (left behind for inspection).
 */
export async function createTestDb(): Promise<TestDb> {
  const databaseUrl = inject('databaseUrl');
  const schema = `t_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    options: `-c search_path=${schema}`,
    max: 10,
  });
  pool.on('error', () => undefined);
  await migrate(pool);
  let failed = false;
  onTestFailed(() => {
    failed = true;
  });
  return {
    schema,
    databaseUrl,
    pool,
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
