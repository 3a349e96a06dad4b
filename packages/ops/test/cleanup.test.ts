import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkPolicy, deleteInBatches, parseDuration, RetentionJob } from '../src/index.ts';
import { createTestDb, type TestDb, waitFor } from '@outbox/testkit';
import { age, appendEvents, outboxIds } from './support/db.ts';

const DAY = 86_400;

describe('retention: DELETE in bounded batches', () => {
  let db: TestDb;
  beforeEach(async () => {
    db = await createTestDb({ max: 8 });
  });
  afterEach(async () => db.close());

  it('deletes sent events past retention, batch by batch; keeps young, pending and dead-lettered ones', async () => {
    const old = await appendEvents(db, 'old', 25);
    const oldPending = await appendEvents(db, 'old-pending', 2);
    const oldDead = await appendEvents(db, 'old-dead', 1);
    const young = await appendEvents(db, 'young', 5);
    await age(db, old, 8 * DAY, true);
    await age(db, oldPending, 8 * DAY, false);
    await age(db, oldDead, 8 * DAY, false);
    await db.pool.query(
      "UPDATE outbox SET attempts = 10, error = 'x', dead_lettered_at = now() WHERE id = $1",
      [oldDead[0]],
    );
    await age(db, young, 3600, true);

    const result = await deleteInBatches(db.pool, 'outbox', {
      olderThanSeconds: 7 * DAY,
      batchSize: 10,
      pauseMs: 0,
    });
    expect(result.deleted).toBe(25);
    // 25 old rows, 10 per batch, then the walk meets young rows and stops: no table scan
    // past the first batch that reaches them.
    expect(result.batches).toBeGreaterThanOrEqual(3);
    expect(result.batches).toBeLessThanOrEqual(4);
    expect(await outboxIds(db)).toEqual([...oldPending, ...oldDead, ...young]);
  });

  it('each batch is bounded: maxBatches stops after that many', async () => {
    const old = await appendEvents(db, 'old', 30);
    await age(db, old, 8 * DAY, true);
    const result = await deleteInBatches(db.pool, 'outbox', {
      olderThanSeconds: 7 * DAY,
      batchSize: 10,
      maxBatches: 2,
      pauseMs: 0,
    });
    expect(result).toMatchObject({ deleted: 20, batches: 2 });
    expect(await outboxIds(db)).toEqual(old.slice(20));
  });

  it('skips rows another transaction holds instead of waiting for them', async () => {
    const old = await appendEvents(db, 'old', 4);
    await age(db, old, 8 * DAY, true);
    const holder = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM outbox WHERE id = $1 FOR UPDATE', [old[1]]);
      const result = await deleteInBatches(db.pool, 'outbox', {
        olderThanSeconds: 7 * DAY,
        pauseMs: 0,
      });
      expect(result.deleted).toBe(3);
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    expect(await outboxIds(db)).toEqual([old[1]]);
  });

  it('inbox markers past their retention go, oldest first, in batches', async () => {
    await db.pool.query(
      `INSERT INTO inbox (consumer, event_id, topic, processed_at)
       SELECT 'inventory', 'e' || g, 'orders.events', now() - make_interval(days => CASE WHEN g <= 12 THEN 20 ELSE 1 END)
       FROM generate_series(1, 15) g`,
    );
    const result = await deleteInBatches(db.pool, 'inbox', {
      olderThanSeconds: 14 * DAY,
      batchSize: 5,
      pauseMs: 0,
    });
    expect(result).toMatchObject({ deleted: 12, batches: 3 });
    const { rows } = await db.pool.query<{ event_id: string }>(
      'SELECT event_id FROM inbox ORDER BY event_id',
    );
    expect(rows.map((r) => r.event_id)).toEqual(['e13', 'e14', 'e15']);
  });

  it('the inbox may not forget sooner than the outbox (a replay would apply twice)', () => {
    expect(() => checkPolicy({ outboxSeconds: 7 * DAY, inboxSeconds: DAY })).toThrow(
      /inbox retention/,
    );
    expect(() => checkPolicy({ outboxSeconds: 7 * DAY, inboxSeconds: 8 * DAY })).not.toThrow();
    expect(parseDuration('7d')).toBe(7 * DAY);
    expect(parseDuration('1d12h')).toBe(1.5 * DAY);
    expect(() => parseDuration('7 days')).toThrow(/not a duration/);
  });

  it('the background job cleans on its own and stops cleanly (twice is fine)', async () => {
    const old = await appendEvents(db, 'old', 3);
    await age(db, old, 8 * DAY, true);
    const runs: number[] = [];
    const job = new RetentionJob(
      db.pool,
      { outboxSeconds: 7 * DAY, inboxSeconds: 8 * DAY },
      { intervalMs: 100, onRun: (r) => runs.push(r.outbox.deleted) },
    );
    job.start();
    await waitFor(() => runs.length >= 2, { what: 'two passes' });
    expect(runs[0]).toBe(3);
    expect(await outboxIds(db)).toEqual([]);
    // More old rows while it runs: the next pass takes them.
    const later = await appendEvents(db, 'later', 2);
    await age(db, later, 8 * DAY, true);
    await waitFor(async () => (await outboxIds(db)).length === 0, { what: 'the next pass' });
    await Promise.all([job.stop(), job.stop()]);
  });
});
