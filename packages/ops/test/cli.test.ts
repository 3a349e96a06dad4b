import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from '@outbox/testkit';
import { age, appendEvents, outboxIds } from './support/db.ts';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const DAY = 86_400;

/** `npm run ops -- …` as an operator runs it, against the test's schema. */
async function ops(db: TestDb, ...args: string[]): Promise<unknown> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: packageDir,
    env: {
      ...process.env,
      DATABASE_URL: db.databaseUrl,
      KAFKA_BROKERS: inject('kafkaBrokers').join(','),
      DATABASE_SCHEMA: db.schema,
    },
  });
  return JSON.parse(stdout) as unknown;
}

describe('ops CLI', () => {
  let db: TestDb;
  beforeEach(async () => {
    db = await createTestDb({ max: 8 });
  });
  afterEach(async () => db.close());

  it('cleanup, dead-letters, requeue and partition status/enable, on the schema it is given', async () => {
    const old = await appendEvents(db, 'old', 3);
    await age(db, old, 9 * DAY, true);
    const [dead] = await appendEvents(db, 'dead', 1);
    await db.pool.query(
      "UPDATE outbox SET attempts = 10, error = 'MESSAGE_TOO_LARGE', dead_lettered_at = now() WHERE id = $1",
      [dead],
    );

    expect(await ops(db, 'cleanup', '--outbox-retention', '7d')).toMatchObject({
      layout: 'plain',
      outbox: { deleted: 3 },
      inbox: { deleted: 0 },
    });
    expect(await ops(db, 'dead-letters')).toEqual([
      expect.objectContaining({
        id: dead,
        aggregateId: 'dead',
        attempts: 10,
        error: 'MESSAGE_TOO_LARGE',
      }),
    ]);
    expect(await ops(db, 'requeue', '--ids', dead!)).toEqual({ requeued: [dead] });
    const { rows } = await db.pool.query(
      'SELECT attempts, dead_lettered_at FROM outbox WHERE id = $1',
      [dead],
    );
    expect(rows[0]).toEqual({ attempts: 0, dead_lettered_at: null });

    expect(await ops(db, 'partition', 'status')).toEqual({ partitioned: false, partitions: [] });
    expect(await ops(db, 'partition', 'enable', '--days-ahead', '2')).toMatchObject({
      converted: true,
      copiedRows: 1,
    });
    expect(await ops(db, 'partition', 'status')).toMatchObject({ partitioned: true });
    expect(await outboxIds(db)).toEqual([dead]);
  });

  it('refuses an inbox retention shorter than the outbox one', async () => {
    await expect(
      ops(db, 'cleanup', '--outbox-retention', '7d', '--inbox-retention', '1d'),
    ).rejects.toThrow(/inbox retention must be at least the outbox retention/);
  });
});
