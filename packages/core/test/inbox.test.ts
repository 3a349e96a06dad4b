import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handleOnce, withTransaction } from '../src/index.ts';
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
