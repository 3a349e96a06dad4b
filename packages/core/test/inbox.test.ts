import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handleOnce, withTransaction } from '../src/index.ts';
import { createTestDb, type TestDb } from './support/db.ts';

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
