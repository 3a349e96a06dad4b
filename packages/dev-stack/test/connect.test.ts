import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Relative, not @outbox/core: core depends on the dev-stack, a dependency back would be a cycle.
import { CdcConfirmer, migrate, readSlotLag } from '../../core/src/index.ts';
import {
  connectState,
  startConnect,
  startStack,
  stopConnect,
  type StackEndpoints,
} from '../src/index.ts';
import { findRepoRoot } from '../src/paths.ts';
import { waitFor } from '../src/wait.ts';

// The repo's data dir: the jar caches are shared with every other run.
const opts = {
  dataDir: join(findRepoRoot(), '.data'),
  env: { ...process.env, DATABASE_URL: '', KAFKA_BROKERS: '' },
  log: () => undefined,
};
const schema = `cdc_${randomBytes(4).toString('hex')}`;
const topic = `test.cdc.${schema}`;
let stack: StackEndpoints;
let pool: pg.Pool;
let kafka: Kafka;

beforeAll(async () => {
  stack = await startStack(opts);
  const admin = new pg.Client({ connectionString: stack.databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  pool = new pg.Pool({ connectionString: stack.databaseUrl, options: `-c search_path=${schema}` });
  await migrate(pool);
  kafka = new Kafka({ brokers: stack.kafkaBrokers, logLevel: logLevel.NOTHING });
  const kafkaAdmin = kafka.admin();
  await kafkaAdmin.connect();
  await kafkaAdmin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 6 }] });
  await kafkaAdmin.disconnect();
  await startConnect({ ...opts, schema, topic });
}, 600_000);

afterAll(async () => {
  await stopConnect(opts);
  await pool?.query(`DROP SCHEMA ${schema} CASCADE`);
  await pool?.end();
});

/** Appends events with the SQL function, in one transaction per call. */
async function append(events: [aggregateId: string, n: number][]): Promise<string[]> {
  const ids: string[] = [];
  for (const [aggregateId, n] of events) {
    const { rows } = await pool.query<{ id: string }>(
      `SELECT outbox_append('order', $1, 'OrderEvent', jsonb_build_object('orderId', $1::text, 'seq', $2::int),
                            jsonb_build_object('traceparent', '00-' || md5($1) || '-0000000000000001-01')) AS id`,
      [aggregateId, n],
    );
    ids.push(rows[0]!.id);
  }
  return ids;
}

type Received = KafkaMessage & { partition: number };

/** Reads `topic` from the start until `done(messages so far)` (or the timeout). */
async function read(done: (seen: Received[]) => boolean, timeoutMs = 120_000): Promise<Received[]> {
  const consumer = kafka.consumer({ groupId: `reader-${randomBytes(4).toString('hex')}` });
  const seen: Received[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`gave up after ${seen.length} messages`)),
      timeoutMs,
    );
    void consumer.run({
      eachMessage: async ({ partition, message }) => {
        seen.push({ ...message, partition });
        if (done(seen)) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  }).finally(() => consumer.disconnect());
  return seen;
}

const headersOf = (m: KafkaMessage) =>
  Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, String(v)]));

describe('Debezium outbox connector on Kafka Connect', () => {
  it("publishes an appended event with key = aggregate_id and the relay's headers, nothing else", async () => {
    const [id] = await append([['order-1', 1]]);
    const [message] = await read((seen) => seen.length >= 1);
    expect(String(message!.key)).toBe('order-1');
    expect(JSON.parse(String(message!.value))).toEqual({ orderId: 'order-1', seq: 1 });
    expect(headersOf(message!)).toEqual({
      event_id: id,
      event_type: 'OrderEvent',
      event_version: '1',
      aggregate_type: 'order',
      aggregate_id: 'order-1',
      traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-0000000000000001-01$/),
    });
  });

  it('keeps FIFO per aggregate over 6 partitions, and loses nothing when Connect is SIGKILLed mid-stream', async () => {
    const events: [string, number][] = [];
    for (let n = 1; n <= 10; n += 1) for (let a = 0; a < 20; a += 1) events.push([`agg-${a}`, n]);
    const first = append(events.slice(0, 100));
    const before = (await connectState(opts))!;
    await first;
    process.kill(-before.pid, 'SIGKILL');
    await append(events.slice(100));
    const after = await startConnect({ ...opts, schema, topic });
    expect(after.pid).not.toBe(before.pid);

    const unique = (seen: Received[]) => new Set(seen.map((m) => `${m.key}/${m.value}`)).size;
    const messages = (await read((seen) => unique(seen) >= 1 + events.length)).filter(
      (m) => String(m.key) !== 'order-1',
    );
    const byAggregate = new Map<string, number[]>();
    const partitions = new Map<string, Set<number>>();
    for (const m of messages) {
      const key = String(m.key);
      byAggregate.set(key, [...(byAggregate.get(key) ?? []), JSON.parse(String(m.value)).seq]);
      partitions.set(key, (partitions.get(key) ?? new Set()).add(m.partition));
    }
    // Every event at least once; an aggregate on one partition; its events in order
    // (a re-sent stretch after the kill starts over from an earlier event, never skips).
    expect(byAggregate.size).toBe(20);
    for (const [key, seqs] of byAggregate) {
      expect(new Set(seqs), key).toEqual(new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
      expect(partitions.get(key)!.size, key).toBe(1);
      const firsts = seqs.filter((s, i) => i === 0 || s <= seqs[i - 1]!);
      expect(firsts.length, `${key}: ${seqs.join(',')}`).toBeLessThanOrEqual(2);
    }
    expect(new Set(messages.map((m) => m.partition)).size).toBeGreaterThan(1);
  });

  it('the slot tells what Connect has not confirmed: lag and retained WAL grow while it is down, and fall once it is back', async () => {
    const before = (await connectState(opts))!;
    process.kill(-before.pid, 'SIGKILL');
    await waitFor(async () => (await readSlotLag(pool, before.slot))?.active === false, {
      what: "the killed Connect's walsender to end",
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    const idle = (await readSlotLag(pool, before.slot))!;
    const events: [string, number][] = [];
    for (let n = 1; n <= 200; n += 1) events.push([`lag-${n % 10}`, n]);
    await append(events);
    const down = (await readSlotLag(pool, before.slot))!;
    // Nobody reads the slot: what was appended is all unconfirmed, and kept.
    expect(down.active).toBe(false);
    expect(down.lagSeconds).toBeNull();
    expect(down.lagBytes).toBeGreaterThan(idle.lagBytes);
    expect(down.retainedBytes).toBeGreaterThanOrEqual(down.lagBytes);
    expect(down.walStatus).toBe('reserved');

    await startConnect({ ...opts, schema, topic });
    await read(
      (seen) => seen.filter((m) => String(m.key).startsWith('lag-')).length >= events.length,
    );
    // Connect flushes its offsets every second, and confirms the slot with them.
    await waitFor(
      async () => {
        const now = (await readSlotLag(pool, before.slot))!;
        return now.active && now.lagBytes < down.lagBytes - (down.lagBytes - idle.lagBytes) / 2;
      },
      { what: 'the slot to confirm what Connect re-read', timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(await readSlotLag(pool, 'no_such_slot')).toBeUndefined();
  });

  it('the CDC confirmer marks sent what the slot confirmed, never what Connect has not published', async () => {
    const before = (await connectState(opts))!;
    const confirmer = new CdcConfirmer({ pool, slot: before.slot, topic });
    const pendingOf = async (ids: string[]) =>
      (
        await pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM outbox WHERE id = ANY($1::bigint[]) AND sent_at IS NULL',
          [ids],
        )
      ).rows[0]!.n;
    // What earlier tests appended, published and confirmed by now, goes first.
    await waitFor(async () => (await confirmer.tick()).waiting === 0, {
      what: 'the earlier rows confirmed',
      timeoutMs: 60_000,
      intervalMs: 500,
    });

    process.kill(-before.pid, 'SIGKILL');
    await waitFor(async () => (await readSlotLag(pool, before.slot))?.active === false, {
      what: "the killed Connect's walsender to end",
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    const ids = await append(Array.from({ length: 20 }, (_, n) => [`confirm-${n % 4}`, n]));
    // Connect is down: nothing of it is on the topic, so nothing may be marked sent.
    for (let round = 0; round < 5; round += 1) {
      expect((await confirmer.tick()).marked).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(await pendingOf(ids)).toBe(20);

    await startConnect({ ...opts, schema, topic });
    await waitFor(async () => (await confirmer.tick(), (await pendingOf(ids)) === 0), {
      what: 'the 20 rows marked sent once Connect confirmed them',
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    const eventIds = (seen: Received[]) => new Set(seen.map((m) => headersOf(m).event_id));
    const published = eventIds(await read((seen) => ids.every((id) => eventIds(seen).has(id))));
    for (const id of ids) expect(published.has(id), id).toBe(true);
    const { rows } = await pool.query<{ topic: string }>(
      'SELECT DISTINCT topic FROM outbox WHERE id = ANY($1::bigint[])',
      [ids],
    );
    expect(rows).toEqual([{ topic }]);

    // An idle outbox: the connector's heartbeats carry the slot past the last append.
    const [last] = await append([['confirm-idle', 1]]);
    await waitFor(async () => (await confirmer.tick(), (await pendingOf([last!])) === 0), {
      what: 'the last append before an idle outbox marked sent',
      timeoutMs: 30_000,
      intervalMs: 500,
    });
  });

  it('stop drops the replication slot, the publication and the offsets', async () => {
    const state = (await connectState(opts))!;
    await stopConnect(opts);
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    const slots = await client.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [
      state.slot,
    ]);
    const pubs = await client.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [
      state.slot,
    ]);
    await client.end();
    expect(slots.rowCount).toBe(0);
    expect(pubs.rowCount).toBe(0);
    expect(existsSync(state.offsetsFile)).toBe(false);
    expect(await connectState(opts)).toBeUndefined();
  });
});
