import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withTransaction } from '../src/index.ts';
import {
  createTestDb,
  createTopics,
  readTopic,
  type TestDb,
  testKafka,
} from '../../testkit/src/index.ts';
import { RelayHarness } from './support/relay.ts';

describe('outbox_append() in SQL', () => {
  const kafka = testKafka();
  let db: TestDb;
  let h: RelayHarness;

  beforeEach(async () => {
    db = await createTestDb();
    h = new RelayHarness(db, kafka);
  });
  afterEach(async () => {
    await h.close();
    await db.close();
  });

  it('appends from a trigger on a business table, in its transaction, and relays like the writer', async () => {
    const { accounts } = await createTopics(kafka, ['accounts']);
    await db.pool.query(`
      CREATE TABLE accounts (id TEXT PRIMARY KEY, email TEXT NOT NULL);
      CREATE FUNCTION accounts_opened() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM outbox_append('account', NEW.id, 'AccountOpened',
                              jsonb_build_object('email', NEW.email),
                              jsonb_build_object('correlationId', 'corr-' || NEW.id));
        RETURN NEW;
      END $$;
      CREATE TRIGGER accounts_opened AFTER INSERT ON accounts
        FOR EACH ROW EXECUTE FUNCTION accounts_opened();`);

    // A rolled-back business write leaves no event behind, a committed one leaves one.
    await expect(
      withTransaction(db.pool, async (c) => {
        await c.query("INSERT INTO accounts VALUES ('a-0', 'gone@example.com')");
        throw new Error('business rule says no');
      }),
    ).rejects.toThrow('business rule says no');
    await db.pool.query("INSERT INTO accounts VALUES ('a-1', 'ada@example.com')");
    const { rows } = await db.pool.query('SELECT id, aggregate_id FROM outbox');
    expect(rows).toEqual([{ id: expect.any(String), aggregate_id: 'a-1' }]);

    const relay = await h.relay({ topics: { account: accounts! } });
    expect(await relay.tick()).toMatchObject({ claimed: 1, sent: 1 });
    const [message] = await readTopic(kafka, accounts!, 1);
    expect(message).toMatchObject({
      key: 'a-1',
      headers: {
        event_id: rows[0].id,
        event_type: 'AccountOpened',
        event_version: '1',
        aggregate_type: 'account',
        aggregate_id: 'a-1',
        correlationId: 'corr-a-1',
      },
    });
    expect(JSON.parse(message!.value)).toEqual({ email: 'ada@example.com' });
  });

  it('returns the id, takes a version, and refuses what the writer refuses, writing nothing', async () => {
    const { rows } = await db.pool.query<{ id: string }>(
      `SELECT outbox_append('order', 'o-1', 'OrderPaid', '{"amount": 5}', '{}', 2) AS id`,
    );
    const stored = await db.pool.query('SELECT event_version FROM outbox WHERE id = $1', [
      rows[0]!.id,
    ]);
    expect(stored.rows).toEqual([{ event_version: 2 }]);

    const bad: [string, unknown[], RegExp][] = [
      ['empty aggregate_type', ['', 'o', 'E', '{}'], /aggregate_type must be a non-empty/],
      ['blank aggregate_id', ['order', '  ', 'E', '{}'], /aggregate_id must be a non-empty/],
      ['NULL event_type', ['order', 'o', null, '{}'], /event_type must be a non-empty/],
      ['NULL payload', ['order', 'o', 'E', null], /payload must not be NULL/],
      ['headers not an object', ['order', 'o', 'E', '{}', '[1]'], /headers must be a JSON object/],
      [
        'a header not a string',
        ['order', 'o', 'E', '{}', '{"n": 1}'],
        /header value must be a string/,
      ],
      ['version 0', ['order', 'o', 'E', '{}', '{}', 0], /event_version must be a positive/],
      [
        'payload over 1 MiB',
        ['order', 'o', 'E', JSON.stringify({ blob: 'x'.repeat(1024 * 1024) })],
        /over the 1 MiB limit/,
      ],
    ];
    for (const [what, args, message] of bad) {
      const params = args.map((_, i) => `$${i + 1}`).join(', ');
      await expect(
        db.pool.query(`SELECT outbox_append(${params})`, args),
        what,
      ).rejects.toMatchObject({ code: '22023', message: expect.stringMatching(message) });
    }
    const { rows: count } = await db.pool.query('SELECT count(*)::int AS n FROM outbox');
    expect(count).toEqual([{ n: 1 }]);
  });
});
