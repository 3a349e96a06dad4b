import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgConfig } from '@outbox/core';
import { FailurePoint, FailurePoints, migrateLab } from '@outbox/lab';
import { startStack } from '@outbox/dev-stack';
import { TrafficGenerator } from '../src/traffic.ts';
import { followTrafficRate, setTrafficRate } from '../src/traffic-setting.ts';

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The demo's traffic follows the `traffic_rate` setting the dashboard writes. */
describe('traffic_rate setting', () => {
  const schema = `traffic_${randomBytes(3).toString('hex')}`;
  let pool: pg.Pool;
  let databaseUrl: string;
  // Nothing listens there: the generator's requests fail, and only its rate matters here.
  const traffic = new TrafficGenerator('http://127.0.0.1:9');
  let unfollow: () => Promise<void>;

  beforeAll(async () => {
    ({ databaseUrl } = await startStack({ log: () => undefined }));
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    pool = new pg.Pool(pgConfig({ DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema }));
    await migrateLab(pool);
    unfollow = await followTrafficRate(
      { connectionString: databaseUrl, schema },
      pool,
      traffic,
      () => undefined,
    );
  });
  afterAll(async () => {
    traffic.stop();
    await unfollow?.();
    await pool?.query(`DROP SCHEMA ${schema} CASCADE`);
    await pool?.end();
  });

  it('follows changes, keeps the rate when a failure point is armed, and survives a dropped LISTEN connection', async () => {
    await setTrafficRate(pool, 3);
    await until(() => traffic.currentRate === 3, 'rate 3');

    // Arming a fault notifies the same channel; the rate must stay.
    await new FailurePoints(pool).arm(FailurePoint.workerKillMidPublish, { mode: 'once' });
    await pool.query("DELETE FROM demo_settings WHERE key = 'traffic_rate'");
    await new Promise((r) => setTimeout(r, 500));
    expect(traffic.currentRate).toBe(3);

    // PostgreSQL drops the listener (as in a restart); a change made meanwhile arrives.
    const { rows: killed } = await pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE query LIKE 'LISTEN %failure_points.${schema}%' AND pid <> pg_backend_pid()`,
    );
    expect(killed).toHaveLength(1);
    await setTrafficRate(pool, 7);
    await until(() => traffic.currentRate === 7, 'rate 7 after the reconnect');
    await setTrafficRate(pool, 0);
    await until(() => traffic.currentRate === 0, 'rate 0');
  });
});
