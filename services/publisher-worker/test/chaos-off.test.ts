import { FailurePoint } from '@outbox/lab';
import { describe, expect, it } from 'vitest';
import { eventIds, readTopic, startService, testKafka, waitFor } from '@outbox/testkit';
import {
  append,
  failurePointsOf,
  orderEvents,
  pending,
  workerEnv,
  useWorkerFixture,
} from './support/outbox.ts';

/**
 * Chaos only when asked (issue 11): the failure points are the lab's, not the pattern's.
 * A worker started without CHAOS_ENABLED follows none of them — no LISTEN session, no
 * poll of failure_points — and an armed point does nothing; the same worker with
 * CHAOS_ENABLED=true obeys it (chaos.test.ts has the rest of that side).
 */
describe('publisher-worker with chaos off and on', () => {
  const kafka = testKafka();
  const fx = useWorkerFixture(kafka);

  /** Sessions LISTENing for this schema's failure-point changes. */
  const failurePointListeners = async () =>
    (
      await fx.db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE query ILIKE 'LISTEN "failure_points.' || current_schema() || '"%'`,
      )
    ).rows[0]!.n;

  /**
   * Sessions that try to read failure_points within `ms`: the table is locked
   * exclusively meanwhile, so a follower's 1 s poll shows up as a lock wait.
   */
  async function failurePointPollers(ms: number): Promise<number> {
    const client = await fx.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('LOCK TABLE failure_points IN ACCESS EXCLUSIVE MODE');
      await new Promise((resolve) => setTimeout(resolve, ms));
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
         WHERE c.relname = 'failure_points' AND c.relnamespace = current_schema()::regnamespace
           AND NOT l.granted`,
      );
      return rows[0]!.n;
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  }

  it('off (the default): no failure-point session or poll, and an armed kill does nothing', async () => {
    const ids = await append(fx.db, orderEvents(5));
    await failurePointsOf(fx.db).arm(FailurePoint.workerKillMidPublish, { mode: 'on' });
    const env = workerEnv(fx.db, fx.prefix, { REPLICA_ID: 'w1' });
    delete env.CHAOS_ENABLED;
    const worker = await startService(env);
    fx.procs.push(worker);
    await waitFor(async () => (await pending(fx.db)) === 0, { what: 'the rows relayed' });
    const received = await readTopic(kafka, fx.topic, { until: (r) => r.length >= ids.length });
    expect(eventIds(received)).toEqual(new Set(ids));
    expect(worker.child.exitCode).toBeNull(); // the armed kill never fired
    expect(await failurePointListeners()).toBe(0);
    expect(await failurePointPollers(2_500)).toBe(0);
    const { rows } = await fx.db.pool.query<{ fired: number }>(
      'SELECT fired FROM failure_points WHERE name = $1',
      [FailurePoint.workerKillMidPublish],
    );
    expect(rows[0]?.fired).toBe(0);
  });

  it('on (CHAOS_ENABLED=true): a LISTEN session, the poll, and the armed kill fires', async () => {
    const worker = await startService(workerEnv(fx.db, fx.prefix, { REPLICA_ID: 'w1' }));
    fx.procs.push(worker);
    await waitFor(async () => (await failurePointListeners()) === 1, {
      what: "the worker's failure-point LISTEN session",
    });
    expect(await failurePointPollers(2_500)).toBeGreaterThanOrEqual(1);
    await failurePointsOf(fx.db).arm(FailurePoint.workerKillMidPublish, { mode: 'once' });
    await append(fx.db, orderEvents(5));
    expect(await worker.exited).toEqual({ code: null, signal: 'SIGKILL' });
  });
});
