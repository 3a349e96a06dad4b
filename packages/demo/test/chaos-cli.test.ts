import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FailurePoint, FailurePoints } from '@outbox/lab';
import { createTestDb, type TestDb } from '@outbox/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const demoDir = fileURLToPath(new URL('..', import.meta.url));

/**
 * `npm run chaos` against a demo in its own schema (DATABASE_SCHEMA, as `npm run demo
 * -- --help` offers for a second demo beside the first): the points it arms and the
 * audit it prints are that demo's, not the public schema's.
 */
describe('npm run chaos with DATABASE_SCHEMA', () => {
  let db: TestDb;
  beforeAll(async () => {
    db = await createTestDb();
  });
  afterAll(async () => {
    await db?.close();
  });

  const chaos = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'src/chaos-cli.ts', ...args], {
      cwd: demoDir,
      env: { ...process.env, DATABASE_URL: db.databaseUrl, DATABASE_SCHEMA: db.schema },
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('arms the failure point in that schema and audits that schema', async () => {
    const armed = chaos('arm', FailurePoint.workerKillMidPublish, 'once');
    expect(armed.status, armed.stderr).toBe(0);
    const state = (await new FailurePoints(db.pool).list()).find(
      (p) => p.name === FailurePoint.workerKillMidPublish,
    );
    expect(state).toMatchObject({ mode: 'once', fired: 0 });

    await db.pool.query(
      `INSERT INTO orders (id, user_id, sku, quantity, status, seq, mode)
       VALUES (gen_random_uuid(), 1, 'sku-1', 1, 'created', 1, 'naive')`,
    );
    const audited = chaos('audit');
    expect(audited.status, audited.stderr).toBe(0);
    expect(JSON.parse(audited.stdout)).toMatchObject({ orders: 1 });
  });
});
