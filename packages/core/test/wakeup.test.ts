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

  it('a relay that died asleep stops counting once its heartbeat is older than the TTL in its row', async () => {
    await db.pool.query(
      "INSERT INTO outbox_relay_members (replica_id, sleeping, ttl_ms, heartbeat_at) VALUES ('dead', true, 30000, now() - interval '31 seconds')",
    );
    await append();
    await settle();
    expect(notifications).toBe(0);
  });

  it('a relay with a long poll (TTL 120 s in its row) still counts after 31 s asleep', async () => {
    await db.pool.query(
      "INSERT INTO outbox_relay_members (replica_id, sleeping, ttl_ms, heartbeat_at) VALUES ('long-poll', true, 120000, now() - interval '31 seconds')",
    );
    await append();
    await waitFor(() => notifications === 1, { timeoutMs: 5_000, what: 'the notification' });
  });
});
