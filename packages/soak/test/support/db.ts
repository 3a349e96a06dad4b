import { randomBytes } from 'node:crypto';
import { migrateLab } from '@outbox/lab';
import pg from 'pg';
import { inject, onTestFailed } from 'vitest';

export interface TestDb {
  schema: string;
  pool: pg.Pool;
  config: pg.ClientConfig;
  close(): Promise<void>;
}

/** A fresh migrated schema on the shared PostgreSQL; dropped on close unless the test failed. */
export async function createTestDb(): Promise<TestDb> {
  const databaseUrl = inject('databaseUrl');
  const schema = `t_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const config = { connectionString: databaseUrl, options: `-c search_path=${schema}` };
  const pool = new pg.Pool({ ...config, max: 8 });
  pool.on('error', () => undefined);
  await migrateLab(pool);
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
