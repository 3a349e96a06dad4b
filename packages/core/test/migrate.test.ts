import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../src/index.ts';
import { createTestDb, type TestDb } from '../../testkit/src/index.ts';

const migrator = fileURLToPath(new URL('./fixtures/migrate-process.ts', import.meta.url));

function runMigrator(db: TestDb): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', migrator], {
      env: { ...process.env, TEST_DB_CONFIG: JSON.stringify(db.config) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe('migrate', () => {
  let db: TestDb;
  afterEach(async () => db.close());

  it('two processes migrating at once: both succeed, each version applied once', async () => {
    db = await createTestDb({ migrate: false });
    const [a, b] = await Promise.all([runMigrator(db), runMigrator(db)]);
    expect(a.code, a.out).toBe(0);
    expect(b.code, b.out).toBe(0);
    const applied = [...JSON.parse(a.out.trim()), ...JSON.parse(b.out.trim())].sort();
    const versions = (await loadMigrations()).map((m) => m.version);
    // Every version was applied by exactly one of the two.
    expect(applied).toEqual(versions.sort());
    const { rows } = await db.pool.query('SELECT version FROM outbox_migrations ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual(versions);
  });

  it('is a no-op the second time', async () => {
    db = await createTestDb();
    expect(await migrate(db.pool)).toEqual([]);
  });

  it("creates the pattern's tables and no table of the lab's demo", async () => {
    db = await createTestDb({ migrate: false });
    await migrate(db.pool);
    const { rows } = await db.pool.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables
       WHERE table_schema = current_schema() ORDER BY table_name`,
    );
    expect(rows.map((r) => r.name)).toEqual([
      'inbox',
      'outbox',
      'outbox_migrations',
      'outbox_relay_live_members',
      'outbox_relay_members',
    ]);
  });
});
