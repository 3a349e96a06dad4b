import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requeueQuery } from '../src/index.ts';
import {
  createTestDb,
  createTopics,
  readTopic,
  type TestDb,
  testKafka,
} from '../../testkit/src/index.ts';
import { orderEvent, RelayHarness } from './support/relay.ts';

// The broker refuses messages over this size on the test topic: a real, per-message
// rejection (MESSAGE_TOO_LARGE) to make one event fail while others pass.
const TOPIC_MAX_BYTES = 2_000;

describe('relay failures: retries, backoff, dead-letter, FIFO through retries', () => {
  const kafka = testKafka();
  let db: TestDb;
  let h: RelayHarness;
  let topic: string;

  beforeEach(async () => {
    db = await createTestDb();
    h = new RelayHarness(db, kafka);
    topic = (
      await createTopics(kafka, ['orders'], {
        configEntries: [{ name: 'max.message.bytes', value: String(TOPIC_MAX_BYTES) }],
      })
    ).orders!;
  });
  afterEach(async () => {
    await h.close();
    await db.close();
  });

  const big = { blob: 'x'.repeat(TOPIC_MAX_BYTES * 2) };

  async function row(id: string) {
    const { rows } = await db.pool.query(
      `SELECT attempts, error, sent_at, dead_lettered_at, next_attempt_at > now() AS backing_off
       FROM outbox WHERE id = $1`,
      [id],
    );
    return rows[0];
  }

  it('a failing event holds back the later events of its aggregate, and only those', async () => {
    const ids = await h.append([
      orderEvent('A', 1),
      orderEvent('B', 1),
      orderEvent('A', 2, big), // refused by the broker
      orderEvent('B', 2),
      orderEvent('A', 3),
      orderEvent('B', 3),
    ]);
    // A backoff longer than a tick on a loaded machine (0.2 s was not: the row's
    // next_attempt_at, counted from the claim, had passed by the time it was read).
    const relay = await h.relay({
      topics: { order: topic },
      retryBaseSeconds: 2,
      retryMaxSeconds: 2,
    });
    expect(await relay.tick()).toEqual({ claimed: 6, sent: 4, failed: 1, heldBack: 1 });

    expect(await row(ids[2]!)).toMatchObject({ attempts: 1, sent_at: null, backing_off: true });
    expect((await row(ids[2]!)).error).toMatch(/MESSAGE_TOO_LARGE|too large/i);
    // A3 waits behind A2; B is unaffected.
    expect((await row(ids[4]!)).sent_at).toBeNull();
    for (const i of [0, 1, 3, 5]) expect((await row(ids[i]!)).sent_at).toBeInstanceOf(Date);
    // Not claimable while A2 backs off or fails: A3 stays held.
    expect(await relay.tick()).toMatchObject({ sent: 0 });

    // The operator raises the topic limit; after the backoff the retry passes and A3 follows.
    const admin = kafka.admin();
    await admin.connect();
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        { type: 2, name: topic, configEntries: [{ name: 'max.message.bytes', value: '1048588' }] },
      ],
    });
    await admin.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    let sent = 0;
    for (let i = 0; i < 30 && sent < 2; i += 1) {
      sent += (await relay.tick()).sent;
      if (sent < 2) await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(sent).toBe(2);

    // Partitions the broker accepted before it refused the batch may have been written
    // twice (at-least-once); order is judged on each event's first delivery.
    const received = await readTopic(kafka, topic, 6);
    const seqOf = (key: string) => {
      const seen = new Set<string>();
      return received
        .filter((m) => m.key === key)
        .sort((x, y) => Number(x.offset) - Number(y.offset))
        .filter((m) => !seen.has(m.headers.event_id!) && seen.add(m.headers.event_id!))
        .map((m) => JSON.parse(m.value).seq);
    };
    expect(seqOf('A')).toEqual([1, 2, 3]);
    expect(seqOf('B')).toEqual([1, 2, 3]);
  });

  it('retries with exponential backoff, then dead-letters at the cap; requeue puts it back', async () => {
    const [poison, other] = await h.append([orderEvent('P', 1, big), orderEvent('Q', 1)]);
    const relay = await h.relay({
      topics: { order: topic },
      maxAttempts: 3,
      // Longer than a tick on a loaded machine, so "not retried before its time" holds.
      retryBaseSeconds: 1,
      retryMaxSeconds: 10,
    });
    await relay.tick();
    expect(await row(other!)).toMatchObject({ sent_at: expect.any(Date) });

    const delays: number[] = [];
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const r = await row(poison!);
      expect(r.attempts).toBe(attempt);
      const { rows } = await db.pool.query<{ wait: number }>(
        'SELECT EXTRACT(EPOCH FROM next_attempt_at - now())::float8 AS wait FROM outbox WHERE id = $1',
        [poison],
      );
      delays.push(rows[0]!.wait);
      if (attempt === 3) break;
      // Not retried before its time…
      expect(await relay.tick()).toMatchObject({ claimed: 0 });
      // …and retried after it.
      await new Promise((resolve) => setTimeout(resolve, rows[0]!.wait * 1000 + 50));
      expect(await relay.tick()).toMatchObject({ claimed: 1, failed: 1 });
    }
    // Each wait about twice the previous (1 s, 2 s, 4 s: base * 2^attempts).
    expect(delays[1]! / delays[0]!).toBeGreaterThan(1.5);
    expect(delays[2]! / delays[1]!).toBeGreaterThan(1.5);
    const dead = await row(poison!);
    expect(dead.dead_lettered_at).toBeInstanceOf(Date);
    expect(dead.error).toMatch(/MESSAGE_TOO_LARGE|too large/i);
    // Dead-lettered: no longer claimed, however long we wait.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await relay.tick()).toMatchObject({ claimed: 0 });

    // An operator requeues it: it is pending and due again.
    const requeued = await db.pool.query(requeueQuery([poison!]));
    expect(requeued.rowCount).toBe(1);
    expect(await row(poison!)).toMatchObject({
      attempts: 0,
      dead_lettered_at: null,
      backing_off: false,
    });
    expect(await relay.tick()).toMatchObject({ claimed: 1 });
  });
});
