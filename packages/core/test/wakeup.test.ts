import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutboxWriter, withTransaction } from '../src/index.ts';
import { createTestDb, type TestDb, waitFor } from '../../testkit/src/index.ts';

describe('wake-up: writers notify only while a relay sleeps', () => {
  let db: TestDb;
  let listener: pg.Client;
  let notifications = 0;
  const writer = new OutboxWriter();
  const append = () =>
    withTransaction(db.pool, (c) =>
      writer.appendBatch(
        c,
        [1, 2, 3].map((n) => ({
          aggregateType: 'order',
          aggregateId: `a${n}`,
          eventType: 'E',
          payload: {},
        })),
      ),
    );
  const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

  beforeEach(async () => {
    db = await createTestDb();
    notifications = 0;
    listener = new pg.Client(db.config);
    await listener.connect();
    listener.on('notification', () => (notifications += 1));
    await listener.query(`LISTEN "outbox_pending.${db.schema}"`);
  });
  afterEach(async () => {
    await listener.end();
    await db.close();
  });

  it('no relay asleep: the insert sends nothing', async () => {
    await db.pool.query(
      "INSERT INTO outbox_relay_members (replica_id, sleeping) VALUES ('busy', false)",
    );
    await append();
    await settle();
    expect(notifications).toBe(0);
  });

  it('a relay asleep: one notification per transaction, not per row', async () => {
    await db.pool.query(
      "INSERT INTO outbox_relay_members (replica_id, sleeping) VALUES ('idle', true)",
    );
    await append();
    await settle();
    expect(notifications).toBe(1);
  });

  it('a REPEATABLE READ writer notifies even while no relay sleeps (its snapshot may predate the flag)', async () => {
    await db.pool.query(
      "INSERT INTO outbox_relay_members (replica_id, sleeping) VALUES ('busy', false)",
    );
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await writer.append(client, {
        aggregateType: 'order',
        aggregateId: 'rr',
        eventType: 'E',
        payload: {},
      });
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await waitFor(() => notifications === 1, { timeoutMs: 5_000, what: 'the notification' });
  });

  it('a relay that died asleep stops counting after 30 s', async () => {
    await db.pool.query(
      "INSERT INTO outbox_relay_members (replica_id, sleeping, heartbeat_at) VALUES ('dead', true, now() - interval '1 minute')",
    );
    await append();
    await settle();
    expect(notifications).toBe(0);
  });
});
