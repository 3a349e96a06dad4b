import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  InvalidEventError,
  NotInTransactionError,
  OutboxWriter,
  PayloadNotSerializableError,
  PayloadTooLargeError,
  withTransaction,
} from '../src/index.ts';
import { createTestDb, type TestDb } from '../../testkit/src/index.ts';

describe('OutboxWriter.append', () => {
  let db: TestDb;
  const writer = new OutboxWriter();
  const event = (aggregateId: string, payload: unknown = { orderId: aggregateId }) => ({
    aggregateType: 'order',
    aggregateId,
    eventType: 'OrderCreated',
    payload,
    headers: { correlationId: 'c-1' },
  });

  beforeEach(async () => {
    db = await createTestDb();
    await db.pool.query('CREATE TABLE shop_orders (id TEXT PRIMARY KEY)');
  });
  afterEach(async () => db.close());

  async function counts() {
    const { rows } = await db.pool.query<{ orders: number; outbox: number }>(
      'SELECT (SELECT count(*) FROM shop_orders)::int AS orders, (SELECT count(*) FROM outbox)::int AS outbox',
    );
    return rows[0];
  }

  it('commit leaves the order and exactly one outbox row', async () => {
    await withTransaction(db.pool, async (c) => {
      await c.query("INSERT INTO shop_orders VALUES ('o1')");
      await writer.append(c, event('o1'));
    });
    expect(await counts()).toEqual({ orders: 1, outbox: 1 });
    const { rows } = await db.pool.query(
      'SELECT aggregate_id, event_type, payload, headers, sent_at FROM outbox',
    );
    expect(rows[0]).toMatchObject({
      aggregate_id: 'o1',
      event_type: 'OrderCreated',
      payload: { orderId: 'o1' },
      headers: { correlationId: 'c-1' },
      sent_at: null,
    });
  });

  it('rollback of the business transaction leaves no outbox row', async () => {
    await expect(
      withTransaction(db.pool, async (c) => {
        await c.query("INSERT INTO shop_orders VALUES ('o1')");
        await writer.append(c, event('o1'));
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');
    expect(await counts()).toEqual({ orders: 0, outbox: 0 });
  });

  it('refuses to run outside a transaction (that would be a dual write)', async () => {
    await expect(writer.append(db.pool, event('o1'))).rejects.toBeInstanceOf(NotInTransactionError);
    const client = await db.pool.connect();
    try {
      await expect(writer.append(client, event('o1'))).rejects.toBeInstanceOf(
        NotInTransactionError,
      );
    } finally {
      client.release();
    }
    expect(await counts()).toEqual({ orders: 0, outbox: 0 });
  });

  it('appends a batch in order in one statement', async () => {
    const ids = await withTransaction(db.pool, (c) =>
      writer.appendBatch(c, [event('a'), event('b'), event('a')]),
    );
    expect(ids).toHaveLength(3);
    const { rows } = await db.pool.query('SELECT id, aggregate_id FROM outbox ORDER BY id');
    expect(rows.map((r) => r.aggregate_id)).toEqual(['a', 'b', 'a']);
    expect(rows.map((r) => r.id)).toEqual(ids.map((i) => i.id));
  });

  it.each([
    ['payload over 1 MB', event('o1', { blob: 'x'.repeat(1024 * 1024) }), PayloadTooLargeError],
    ['payload not serialisable', event('o1', { n: 10n }), PayloadNotSerializableError],
    [
      'payload with a cycle',
      event(
        'o1',
        (() => {
          const a: Record<string, unknown> = {};
          a.self = a;
          return a;
        })(),
      ),
      PayloadNotSerializableError,
    ],
    ['missing aggregate id', { ...event('o1'), aggregateId: '' }, InvalidEventError],
    // What JSONB / text cannot store: PostgreSQL would fail the INSERT (a 500 upstream).
    ['NUL in the payload', event('o1', { reason: 'a\u0000b' }), PayloadNotSerializableError],
    ['NUL in a payload key', event('o1', { 'a\u0000': 1 }), PayloadNotSerializableError],
    [
      'unpaired surrogate in the payload',
      event('o1', { reason: '\ud800' }),
      PayloadNotSerializableError,
    ],
    [
      'NUL in a header',
      { ...event('o1'), headers: { correlationId: 'c\u0000' } },
      PayloadNotSerializableError,
    ],
    ['NUL in the aggregate id', { ...event('o1'), aggregateId: 'o\u0000' }, InvalidEventError],
  ])('%s → typed error, business transaction rolled back', async (_name, bad, errorClass) => {
    await expect(
      withTransaction(db.pool, async (c) => {
        await c.query("INSERT INTO shop_orders VALUES ('o1')");
        await writer.append(c, bad);
      }),
    ).rejects.toBeInstanceOf(errorClass);
    expect(await counts()).toEqual({ orders: 0, outbox: 0 });
  });

  it('the too-large error says how to carry a blob instead', async () => {
    const error = await withTransaction(db.pool, (c) =>
      writer.append(c, event('o1', { blob: 'x'.repeat(2_000_000) })),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect((error as PayloadTooLargeError).bytes).toBeGreaterThan(2_000_000);
    expect((error as Error).message).toMatch(/reference/);
  });

  it('stores what only looks like NUL or a surrogate, and real pairs (emoji)', async () => {
    const payload = { path: 'C:\\u0000', escaped: '\\ud800', emoji: 'ok 😀', rtl: 'إلغاء' };
    await withTransaction(db.pool, (c) => writer.append(c, event('o1', payload)));
    const { rows } = await db.pool.query('SELECT payload FROM outbox');
    expect(rows[0].payload).toEqual(payload);
  });
});

describe('OutboxWriter.appendWith: the change and its events in one statement', () => {
  let db: TestDb;
  const writer = new OutboxWriter();
  const event = (aggregateId: string) => ({
    aggregateType: 'order',
    aggregateId,
    eventType: 'OrderCreated',
    payload: { orderId: aggregateId },
  });
  // An order for a known sku only: the INSERT … SELECT finds no row for an unknown one.
  const placeOrder = (id: string, sku: string) => ({
    text: `INSERT INTO shop_orders (id, sku) SELECT $1, s.sku FROM skus s WHERE s.sku = $2 RETURNING id`,
    values: [id, sku],
  });

  beforeEach(async () => {
    db = await createTestDb();
    await db.pool.query(
      `CREATE TABLE skus (sku TEXT PRIMARY KEY);
       INSERT INTO skus VALUES ('sku-1');
       CREATE TABLE shop_orders (id TEXT PRIMARY KEY, sku TEXT NOT NULL)`,
    );
  });
  afterEach(async () => db.close());

  const rows = async () =>
    (
      await db.pool.query<{ orders: string[]; events: string[] }>(
        `SELECT ARRAY(SELECT id FROM shop_orders ORDER BY id) AS orders,
                ARRAY(SELECT aggregate_id || ':' || id FROM outbox ORDER BY id) AS events`,
      )
    ).rows[0];

  it('writes the order and its events, in order, from a pool (no BEGIN of its own)', async () => {
    const result = await writer.appendWith(db.pool, placeOrder('o1', 'sku-1'), [
      event('o1'),
      event('o1'),
    ]);
    expect(result.changed).toBe(1);
    expect(result.events).toHaveLength(2);
    const [first, second] = result.events.map((e) => BigInt(e.id));
    expect(first! < second!).toBe(true);
    expect(await rows()).toEqual({
      orders: ['o1'],
      events: result.events.map((e) => `o1:${e.id}`),
    });
  });

  it('appends nothing when the change touched no row', async () => {
    const result = await writer.appendWith(db.pool, placeOrder('o2', 'no-such-sku'), [event('o2')]);
    expect(result).toEqual({ changed: 0, events: [] });
    expect(await rows()).toEqual({ orders: [], events: [] });
  });

  it('leaves neither row when the change fails, nor when an event is refused', async () => {
    await writer.appendWith(db.pool, placeOrder('o3', 'sku-1'), [event('o3')]);
    // The same order id again: the change violates the primary key.
    await expect(
      writer.appendWith(db.pool, placeOrder('o3', 'sku-1'), [event('o3')]),
    ).rejects.toThrow(/duplicate key/);
    await expect(
      writer.appendWith(db.pool, placeOrder('o4', 'sku-1'), [{ ...event('o4'), aggregateId: '' }]),
    ).rejects.toBeInstanceOf(InvalidEventError);
    const after = await rows();
    expect(after?.orders).toEqual(['o3']);
    expect(after?.events).toHaveLength(1);
  });

  it('joins the caller’s transaction when given one: a rollback undoes both', async () => {
    await expect(
      withTransaction(db.pool, async (c) => {
        await writer.appendWith(c, placeOrder('o5', 'sku-1'), [event('o5')]);
        throw new Error('the caller changes its mind');
      }),
    ).rejects.toThrow('the caller changes its mind');
    expect(await rows()).toEqual({ orders: [], events: [] });
  });
});
