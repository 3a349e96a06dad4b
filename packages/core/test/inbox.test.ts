import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimInbox, handleEachOnce, handleOnce, withTransaction } from '../src/index.ts';
import { createTestDb, type TestDb } from '../../testkit/src/index.ts';

describe('inbox.handleOnce', () => {
  let db: TestDb;
  beforeEach(async () => {
    db = await createTestDb();
    await db.pool.query('CREATE TABLE stock (sku TEXT PRIMARY KEY, reserved INT NOT NULL)');
    await db.pool.query("INSERT INTO stock VALUES ('sku-1', 0)");
  });
  afterEach(async () => db.close());

  const reserve = (eventId: string, consumer = 'inventory') =>
    withTransaction(db.pool, (c) =>
      handleOnce(c, { consumer, eventId, topic: 'orders' }, (tx) =>
        tx.query("UPDATE stock SET reserved = reserved + 1 WHERE sku = 'sku-1'"),
      ),
    );
  const reserved = async () => (await db.pool.query('SELECT reserved FROM stock')).rows[0].reserved;

  it('processes an event once and skips its duplicates', async () => {
    expect((await reserve('e1')).status).toBe('processed');
    expect((await reserve('e1')).status).toBe('duplicate');
    expect(await reserved()).toBe(1);
  });

  it('deduplicates per consumer', async () => {
    await reserve('e1', 'inventory');
    expect((await reserve('e1', 'billing')).status).toBe('processed');
  });

  it('a failed effect rolls back the inbox marker, so a redelivery is processed', async () => {
    await expect(
      withTransaction(db.pool, (c) =>
        handleOnce(c, { consumer: 'inventory', eventId: 'e2', topic: 'orders' }, async () => {
          throw new Error('handler failed');
        }),
      ),
    ).rejects.toThrow('handler failed');
    expect((await reserve('e2')).status).toBe('processed');
    expect(await reserved()).toBe(1);
  });
});

describe('inbox for a chunk: claimInbox and handleEachOnce', () => {
  let db: TestDb;
  beforeEach(async () => {
    db = await createTestDb();
    await db.pool.query('CREATE TABLE applied (n SERIAL PRIMARY KEY, event_id TEXT NOT NULL)');
  });
  afterEach(async () => db.close());

  const delivery = (eventId: string, consumer = 'inventory') => ({
    consumer,
    eventId,
    topic: 'orders',
    partition: 0,
    offset: '1',
  });

  it('tells new from seen in one statement: seen before, repeated within the call, another consumer', async () => {
    await withTransaction(db.pool, (c) => claimInbox(c, [delivery('e1')]));
    const fresh = await withTransaction(db.pool, (c) =>
      claimInbox(c, [
        delivery('e1'),
        delivery('e2'),
        delivery('e2'),
        delivery('e1', 'billing'),
        delivery('e3'),
      ]),
    );
    expect(fresh).toEqual([false, true, false, true, true]);
    const { rows } = await db.pool.query(
      'SELECT consumer, event_id FROM inbox ORDER BY consumer, event_id',
    );
    expect(rows.map((r) => `${r.consumer}/${r.event_id}`)).toEqual([
      'billing/e1',
      'inventory/e1',
      'inventory/e2',
      'inventory/e3',
    ]);
    expect(await withTransaction(db.pool, (c) => claimInbox(c, []))).toEqual([]);
  });

  it('runs the effect of each new delivery once, in the order given; a failing effect rolls back every marker of the chunk', async () => {
    const run = (ids: string[], failOn?: string) =>
      withTransaction(db.pool, (c) =>
        handleEachOnce(
          c,
          ids.map((id) => delivery(id)),
          async (tx, d) => {
            if (d.eventId === failOn) throw new Error(`effect of ${d.eventId} failed`);
            await tx.query('INSERT INTO applied (event_id) VALUES ($1)', [d.eventId]);
            return d.eventId;
          },
        ),
      );
    await expect(run(['a', 'b', 'c'], 'b')).rejects.toThrow('effect of b failed');
    expect((await db.pool.query('SELECT count(*)::int AS n FROM inbox')).rows[0].n).toBe(0);

    const outcomes = await run(['a', 'b', 'a', 'c']);
    expect(outcomes).toEqual([
      { status: 'processed', result: 'a' },
      { status: 'processed', result: 'b' },
      { status: 'duplicate' },
      { status: 'processed', result: 'c' },
    ]);
    expect((await run(['c', 'd'])).map((o) => o.status)).toEqual(['duplicate', 'processed']);
    const { rows } = await db.pool.query('SELECT event_id FROM applied ORDER BY n');
    expect(rows.map((r) => r.event_id)).toEqual(['a', 'b', 'c', 'd']);
  });
});

describe('withTransaction when PostgreSQL drops the connection', () => {
  let db: TestDb;
  beforeEach(async () => {
    db = await createTestDb();
  });
  afterEach(async () => db.close());

  it('rejects the transaction instead of crashing the process, and the pool recovers', async () => {
    const result = withTransaction(db.pool, async (c) => {
      const { rows } = await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      await c.query('SELECT pg_sleep(0.2)');
    });
    await expect(result).rejects.toThrow();
    const { rows } = await db.pool.query<{ one: number }>('SELECT 1 AS one');
    expect(rows[0]!.one).toBe(1);
  });
});
