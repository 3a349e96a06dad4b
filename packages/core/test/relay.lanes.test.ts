import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTestDb,
  createTopics,
  readTopic,
  testKafka,
  waitFor,
  type Received,
  type TestDb,
} from '../../testkit/src/index.ts';
import { orderEvent, RelayHarness } from './support/relay.ts';

const AGGREGATES = 24;
const EVENTS_EACH = 5;

/** Messages that arrived before an earlier event of their own key had: FIFO breaks. */
function overtakes(received: Received[], idsByKey: Map<string, string[]>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const m of received) {
    const id = m.headers.event_id!;
    const earlier = (idsByKey.get(m.key) ?? []).filter((e) => BigInt(e) < BigInt(id));
    for (const e of earlier) if (!seen.has(e)) out.push(`${m.key}: ${id} before ${e}`);
    seen.add(id);
  }
  return out;
}

/**
 * The pipelined relay (lanes: 2): one lane's batch fails on the real broker, again and
 * again (a row of it goes to a topic that does not exist yet: the whole produce fails
 * and the batch rolls back), while the other lane claims, produces and commits its own
 * batches. The failing lane's aggregates get nothing published out of order, the other
 * lane's get everything meanwhile; once the topic is there, every event is published
 * and no event on the topic ever comes before an earlier one of its aggregate.
 */
describe('relay lanes: a failing batch holds back its own lane only, FIFO per aggregate holds', () => {
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

  async function shardOf(aggregateId: string): Promise<number> {
    const { rows } = await db.pool.query<{ s: number }>(
      'SELECT ((hashtext($1) & 2147483647) % 64)::int AS s',
      [aggregateId],
    );
    return rows[0]!.s;
  }

  it('lane 0 fails batch after batch while lane 1 relays; then both drain, in order', async () => {
    const orders = (await createTopics(kafka, ['orders'])).orders!;
    const ghostTopic = `test.ghost.${randomBytes(4).toString('hex')}`;
    // One replica: its shards are 0 … 63 and lane k takes the shards s with s % 2 = k.
    const ids = Array.from({ length: AGGREGATES }, (_, i) => `agg-${i}`);
    const lanes = new Map<string, number>();
    for (const id of ids) lanes.set(id, (await shardOf(id)) % 2);
    const lane0 = ids.filter((id) => lanes.get(id) === 0);
    const lane1 = ids.filter((id) => lanes.get(id) === 1);
    expect(lane0.length).toBeGreaterThan(2);
    expect(lane1.length).toBeGreaterThan(2);

    // The oldest row of lane 0 goes to the missing topic, so every batch lane 0 claims
    // holds it and fails as a whole. Its aggregate also has order events after it.
    const blocker = lane0[0]!;
    const [ghostId] = await h.append([
      { aggregateType: 'ghost', aggregateId: blocker, eventType: 'Ghost', payload: {} },
    ]);
    const idsByKey = new Map<string, string[]>();
    for (let seq = 1; seq <= EVENTS_EACH; seq += 1) {
      const appended = await h.append(ids.map((id) => orderEvent(id, seq)));
      appended.forEach((eventId, i) =>
        idsByKey.set(ids[i]!, [...(idsByKey.get(ids[i]!) ?? []), eventId]),
      );
    }

    const relay = await h.relay({
      topics: { order: orders, ghost: ghostTopic },
      lanes: 2,
      // Small batches: many of them, so lane 1's next batch is claimed and produced
      // while lane 0's keeps failing.
      batchSize: 7,
      failureBackoffMaxMs: 200,
    });
    await relay.start();

    // Lane 1 drains all of its rows while lane 0's fail: nothing of lane 0 is marked.
    const sentOf = async (aggregates: string[]) => {
      const { rows } = await db.pool.query<{ sent: number; unsent: number; attempts: number }>(
        `SELECT count(*) FILTER (WHERE sent_at IS NOT NULL)::int AS sent,
                count(*) FILTER (WHERE sent_at IS NULL)::int AS unsent,
                COALESCE(sum(attempts), 0)::int AS attempts
           FROM outbox WHERE aggregate_id = ANY($1)`,
        [aggregates],
      );
      return rows[0]!;
    };
    await waitFor(async () => (await sentOf(lane1)).unsent === 0, { timeoutMs: 30_000 });
    expect(await sentOf(lane0)).toEqual({
      sent: 0,
      unsent: lane0.length * EVENTS_EACH + 1,
      attempts: 0, // a missing topic is Kafka's failure, counted against no row
    });
    const meanwhile = await readTopic(kafka, orders, lane1.length * EVENTS_EACH);
    expect(new Set(meanwhile.map((m) => m.key))).toEqual(new Set(lane1));

    // The topic appears: lane 0 drains, the ghost event first, then its aggregate's.
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic: ghostTopic, numPartitions: 3 }],
    });
    await admin.disconnect();
    await waitFor(async () => (await h.pending()) === 0, { timeoutMs: 30_000 });

    const received = await readTopic(kafka, orders, AGGREGATES * EVENTS_EACH);
    expect(new Set(received.map((m) => m.headers.event_id))).toEqual(
      new Set([...idsByKey.values()].flat()),
    );
    expect(overtakes(received, idsByKey)).toEqual([]);
    const ghost = await readTopic(kafka, ghostTopic, 1);
    expect(ghost.map((m) => m.headers.event_id)).toEqual([ghostId]);
    // The ghost event was acked before any order event of its aggregate was sent.
    const { rows } = await db.pool.query<{ before: boolean }>(
      `SELECT (SELECT sent_at FROM outbox WHERE id = $1) <= min(sent_at) AS before
         FROM outbox WHERE aggregate_id = $2 AND aggregate_type = 'order'`,
      [ghostId, blocker],
    );
    expect(rows[0]?.before).toBe(true);
  });

  it('asleep, both lanes wake on NOTIFY; the idle lane follows a busy one without the poll', async () => {
    const orders = (await createTopics(kafka, ['orders'])).orders!;
    const ids = Array.from({ length: 16 }, (_, i) => `wake-${i}`);
    const byLane: [string[], string[]] = [[], []];
    for (const id of ids) byLane[(await shardOf(id)) % 2]!.push(id);
    const [busy, idle] = [byLane[0][0]!, byLane[1][0]!];
    const relay = await h.relay({
      topics: { order: orders },
      lanes: 2,
      listen: db.config,
      pollIntervalMs: 120_000, // nothing here may wait for the poll
      batchSize: 50,
    });
    await relay.start();
    await new Promise((resolve) => setTimeout(resolve, 300)); // both lanes asleep
    await h.append([orderEvent(busy, 0), orderEvent(idle, 0)]);
    await waitFor(async () => (await h.pending()) === 0, { timeoutMs: 20_000, what: 'NOTIFY' });

    // Lane 0 busy with a backlog of its own (writers do not notify an awake replica);
    // an event for lane 1 meanwhile is published while lane 0 still has rows.
    await h.append(Array.from({ length: 10_000 }, (_, i) => orderEvent(busy, i + 1)));
    await waitFor(async () => (await h.pending()) < 10_000, { what: 'lane 0 busy' });
    const [late] = await h.append([orderEvent(idle, 1)]);
    await waitFor(
      async () => {
        const { rows } = await db.pool.query<{ sent: boolean }>(
          'SELECT sent_at IS NOT NULL AS sent FROM outbox WHERE id = $1',
          [late],
        );
        return rows[0]?.sent;
      },
      { timeoutMs: 20_000, intervalMs: 20, what: "lane 1's event" },
    );
    expect(await h.pending()).toBeGreaterThan(0); // lane 0 was still draining
    await waitFor(async () => (await h.pending()) === 0, { what: 'lane 0 drained' });
  });

  it('refuses a lane count that is not 1 … 8', async () => {
    await expect(h.relay({ topics: { order: 'x' }, lanes: 0 })).rejects.toThrow(/lanes must be/);
    await expect(h.relay({ topics: { order: 'x' }, lanes: 1.5 })).rejects.toThrow(/lanes must be/);
  });
});
