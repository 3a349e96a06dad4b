import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { handleOnce, withTransaction } from '../src/index.ts';
import {
  createTestDb,
  createTopics,
  readTopic,
  type TestDb,
  testKafka,
  waitFor,
} from '../../testkit/src/index.ts';
import { orderEvent, RelayHarness } from './support/relay.ts';

const crashingRelay = fileURLToPath(new URL('./fixtures/crashing-relay.ts', import.meta.url));

describe('relay killed after the broker ack, before UPDATE sent_at', () => {
  const kafka = testKafka();
  let db: TestDb;
  let h: RelayHarness;
  let topic: string;

  beforeEach(async () => {
    db = await createTestDb();
    h = new RelayHarness(db, kafka);
    topic = (await createTopics(kafka, ['orders'])).orders!;
    await db.pool.query(
      'CREATE TABLE test_reservations (order_id TEXT NOT NULL, event_id TEXT NOT NULL)',
    );
  });
  afterEach(async () => {
    await h.close();
    await db.close();
  });

  it('the next relay publishes the batch again; handleOnce applies each event once', async () => {
    const ids = await h.append(Array.from({ length: 20 }, (_, i) => orderEvent(`o-${i}`, 1)));

    const child = spawn(process.execPath, ['--import', 'tsx', crashingRelay], {
      env: {
        ...process.env,
        TEST_DB_CONFIG: JSON.stringify(db.config),
        TEST_BROKERS: inject('kafkaBrokers').join(','),
        TEST_TOPIC: topic,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const signal = await new Promise((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
    expect(signal).toBe('SIGKILL');
    expect(out).toContain('acked 20');
    expect(out).not.toContain('not killed');

    // Kafka has the 20 events, PostgreSQL still has them pending.
    expect(await h.pending()).toBe(20);
    expect(await readTopic(kafka, topic, 20)).toHaveLength(20);

    // A healthy relay starts and publishes them again: at-least-once.
    // The dead relay's membership lasts its TTL: until then the new one relays its
    // share of the shards only, then all of them.
    const relay = await h.relay({ topics: { order: topic } });
    let sent = 0;
    await waitFor(
      async () => {
        sent += (await relay.tick()).sent;
        return (await h.pending()) === 0;
      },
      { timeoutMs: 40_000, intervalMs: 250, what: "the dead relay's shards taken over" },
    );
    expect(sent).toBe(20);
    const delivered = await readTopic(kafka, topic, 40, { settleMs: 1_000 });
    expect(delivered).toHaveLength(40);

    // The consumer side: the inbox turns 40 deliveries into 20 effects.
    const outcomes = { processed: 0, duplicate: 0 };
    for (const m of delivered) {
      const outcome = await withTransaction(db.pool, (c) =>
        handleOnce(
          c,
          {
            consumer: 'inventory',
            eventId: m.headers.event_id!,
            topic: m.topic,
            partition: m.partition,
            offset: m.offset,
          },
          (tx) =>
            tx.query('INSERT INTO test_reservations VALUES ($1, $2)', [m.key, m.headers.event_id]),
        ),
      );
      outcomes[outcome.status] += 1;
    }
    expect(outcomes).toEqual({ processed: 20, duplicate: 20 });
    const { rows } = await db.pool.query(
      'SELECT event_id, count(*)::int AS n FROM test_reservations GROUP BY event_id',
    );
    expect(rows).toHaveLength(20);
    expect(rows.every((r) => r.n === 1)).toBe(true);
    expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set(ids));
  });
});
