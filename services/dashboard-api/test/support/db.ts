import { randomBytes } from 'node:crypto';
import { migrate } from '@outbox/core';
import pg from 'pg';
import { inject, onTestFailed } from 'vitest';

export const TEST_SKUS = ['sku-1', 'sku-2', 'sku-3'];

export interface TestDb {
  schema: string;
  databaseUrl: string;
  pool: pg.Pool;
  close(): Promise<void>;
}

/**
 * A fresh schema, migrated and stocked with TEST_SKUS, with a pool on it. Dropped on
 * close unless a test failed (left behind for inspection).
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
    max: 6,
  });
  pool.on('error', () => undefined);
  await migrate(pool);
  await pool.query('INSERT INTO inventory (sku, available) SELECT unnest($1::text[]), 1000', [
    TEST_SKUS,
  ]);
  let failed = false;
  try {
    onTestFailed(() => {
      failed = true;
    });
  } catch {
    // Created in a beforeAll: no single test to watch.
  }
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
