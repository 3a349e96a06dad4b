import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRepoRoot, startCluster, type KafkaCluster } from '@outbox/dev-stack';
import { Kafka, logLevel } from 'kafkajs';
import {
  audit,
  demoTopics,
  FailurePoint,
  FailurePoints,
  sentNotDelivered,
  writeRelayAcks,
  type RelayAcksSetting,
} from '@outbox/lab';
import { freeSystemPorts, readTopic } from '@outbox/testkit';
import { BROKER_ACTIONS_KEY, setTrafficRate, startSystem, type System } from '../src/index.ts';

/**
 * The broker's half of the outbox's guarantee, on a real 3-node KRaft cluster (every
 * node broker and controller; topics with replication factor 3, min.insync.replicas 2):
 * the whole backend as real processes, generated traffic, and the dashboard's click
 * "Kill the leader before replication" (broker.kill_leader_unreplicated), once with the
 * relay's acks = 1 and once with acks = all.
 *
 * Why the acks = 1 loss is deterministic here (broker-chaos.ts carries the click out):
 * the leader L of the busiest partition is first made leader of every partition, then
 * both followers are SIGSTOPped. Every node is a KRaft controller, so with two of three
 * frozen the quorum is gone: L cannot shrink the ISR (AlterPartition needs the active
 * controller), the followers stay in the ISR and the high watermark stands still. With
 * acks = 1, L acknowledges every batch of those seconds alone, and the relay marks the
 * rows sent; consumers cannot even read them (they read up to the high watermark).
 * Then L is SIGKILLed and the followers resumed: they elect one of themselves cleanly
 * (they are in the ISR), and L, started again, truncates its log to the new leader's.
 * What L alone had is gone, and the outbox says sent: nothing retries it. No race is
 * involved: the followers copy nothing from the first frozen moment to the kill.
 * With acks = all the same seconds acknowledge nothing (the high watermark cannot
 * advance), the relay's sends fail and are retried after the election: nothing lost.
 *
 * Its own cluster data dir (the soak's is .data/cluster, the demo's .data/demo-cluster).
 */
const dataDir = join(findRepoRoot(), '.data', 'lesson-cluster');
const t0 = Date.now();
const log = (line: string) =>
  process.stderr.write(`[broker-lesson +${((Date.now() - t0) / 1000).toFixed(1)}s] ${line}\n`);

let cluster: KafkaCluster;
let system: System;
let points: FailurePoints;

beforeAll(async () => {
  cluster = await startCluster({ dataDir, log });
  const id = randomBytes(3).toString('hex');
  system = await startSystem({
    cluster,
    schema: `lesson_${id}`,
    topicPrefix: `lesson-${id}.`,
    ports: await freeSystemPorts(),
    dashboard: false,
    env: { LOG_LEVEL: 'warn' },
    log,
  });
  await system.waitReady();
  points = new FailurePoints(system.pool);
});
afterAll(async () => {
  await system?.stop();
  await cluster?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 90_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(300);
  }
}

/** Every worker's /healthz says it relays with these acks. */
async function workersRelayWith(acks: RelayAcksSetting): Promise<void> {
  const want = acks === '1' ? 1 : 'all';
  await until(`the workers to relay with acks = ${acks}`, async () => {
    const bodies = await Promise.all(
      system.urls.workers.map(
        async (u) => (await (await fetch(`${u}/healthz`)).json()) as { acks?: unknown },
      ),
    );
    return bodies.every((b) => b.acks === want);
  });
}

/** Sum of outbox_published_total over both workers' /metrics. */
async function publishedMetric(): Promise<number> {
  let total = 0;
  for (const u of system.urls.workers) {
    const text = await (await fetch(`${u}/metrics`)).text();
    for (const line of text.split('\n'))
      if (line.startsWith('outbox_published_total')) total += Number(line.split(' ').at(-1));
  }
  return total;
}

interface Figures {
  acks: RelayAcksSetting;
  /** The phase's rows are those with id > after. */
  after: string;
  committed: number;
  markedSent: number;
  lost: number;
  duplicates: number;
  lostRows: { id: string; aggregate_id: string; event_type: string; sent_at: Date }[];
}

/** This phase's outbox rows (id > `after`): committed, sent, never delivered, delivered twice. */
async function figures(acks: RelayAcksSetting, after: string): Promise<Figures> {
  const { rows } = await system.pool.query<{ committed: number; sent: number; duplicates: number }>(
    `SELECT count(*)::int AS committed,
            count(*) FILTER (WHERE x.sent_at IS NOT NULL)::int AS sent,
            coalesce(sum(GREATEST((SELECT count(*) FROM consumer_deliveries d WHERE d.event_id = x.id::text) - 1, 0)), 0)::int AS duplicates
       FROM outbox x WHERE x.id > $1`,
    [after],
  );
  const lost = await system.pool.query<Figures['lostRows'][number]>(
    `SELECT x.id::text, x.aggregate_id, x.event_type, x.sent_at FROM outbox x
      WHERE x.id > $1 AND x.sent_at IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM consumer_deliveries d WHERE d.event_id = x.id::text)
      ORDER BY x.id`,
    [after],
  );
  const r = rows[0]!;
  return {
    acks,
    after,
    committed: r.committed,
    markedSent: r.sent,
    lost: lost.rows.length,
    duplicates: r.duplicates,
    lostRows: lost.rows,
  };
}

/**
 * What orders.events holds now, read from the beginning by an independent client:
 * partition@offset → the event_id found there.
 */
async function topicNow(): Promise<Map<string, string>> {
  const kafka = new Kafka({
    clientId: 'lesson-reader',
    brokers: cluster.brokers,
    logLevel: logLevel.NOTHING,
  });
  const topic = demoTopics(system.topicPrefix).orders;
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
  const total = ends.reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
  const read = await readTopic(kafka, topic, { until: total, timeoutMs: 60_000, settleMs: 0 });
  expect(read.length).toBe(total);
  return new Map(read.map((m) => [`${m.partition}@${m.offset}`, m.headers.event_id ?? '']));
}

/** The phase's rows marked sent, with the partition@offset the broker acknowledged. */
async function acknowledgedAt(after: string): Promise<{ id: string; at: string | null }[]> {
  const { rows } = await system.pool.query<{ id: string; at: string | null }>(
    `SELECT id::text, kafka_partition || '@' || kafka_offset AS at FROM outbox
      WHERE id > $1 AND sent_at IS NOT NULL ORDER BY id`,
    [after],
  );
  return rows;
}

/**
 * Messages of orders.events the consumer group has not committed yet (high watermark
 * minus committed offset, summed over the partitions); -1 while it cannot be read.
 */
async function consumerLag(): Promise<number> {
  const kafka = new Kafka({
    clientId: 'lesson-lag',
    brokers: cluster.brokers,
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topic = demoTopics(system.topicPrefix).orders;
    const [ends, [committed]] = await Promise.all([
      admin.fetchTopicOffsets(topic),
      admin.fetchOffsets({ groupId: `${system.topicPrefix}inventory`, topics: [topic] }),
    ]);
    const at = new Map(committed?.partitions.map((p) => [p.partition, Number(p.offset)]));
    return ends.reduce(
      (lag, p) => lag + Math.max(0, Number(p.high) - Math.max(0, at.get(p.partition) ?? 0)),
      0,
    );
  } catch {
    return -1;
  } finally {
    await admin.disconnect();
  }
}

/**
 * Nothing pending in the outbox and the consumer group's lag 0: the consumer has read
 * everything the topic holds. (It was "deliveries unchanged for 5 s", which a consumer
 * held up longer than that after the kill also met: a local run counted 1,270 rows
 * "lost" with acks = all, where nothing can be lost, while the consumer was silent.)
 */
async function settled(): Promise<void> {
  let lag = -1;
  await until(
    'the outbox drained and the consumer caught up',
    async () => {
      const { rows } = await system.pool.query<{ pending: number }>(
        `SELECT count(*)::int AS pending FROM outbox
          WHERE sent_at IS NULL AND dead_lettered_at IS NULL`,
      );
      if (rows[0]!.pending > 0) return false;
      lag = await consumerLag();
      return lag === 0;
    },
    180_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message} (consumer lag ${lag})`);
  });
}

/** The click under traffic: arms the shot, waits until the old leader is back. */
async function killLeaderUnreplicated(acks: RelayAcksSetting): Promise<Figures> {
  await writeRelayAcks(system.pool, acks);
  await workersRelayWith(acks);
  const { rows } = await system.pool.query<{ m: string }>(
    'SELECT coalesce(max(id), 0)::text AS m FROM outbox',
  );
  const after = rows[0]!.m;
  await setTrafficRate(system.pool, 25);
  await sleep(3_000);
  const armedAt = Date.now();
  await points.arm(FailurePoint.brokerKillLeaderUnreplicated, {
    mode: 'once',
    params: { seconds: 3 },
  });
  await until(
    'the old leader started again',
    async () => {
      const { rows: a } = await system.pool.query<{ value: { at: string; text: string }[] }>(
        'SELECT value FROM demo_settings WHERE key = $1',
        [BROKER_ACTIONS_KEY],
      );
      const recent = (a[0]?.value ?? []).filter((x) => Date.parse(x.at) >= armedAt);
      const failed = recent.find((x) => x.text.startsWith('action failed'));
      if (failed) throw new Error(failed.text);
      return (
        recent.some((x) => /truncates/.test(x.text)) && /is up$/.test(recent.at(-1)?.text ?? '')
      );
    },
    180_000,
  );
  await sleep(2_000);
  await setTrafficRate(system.pool, 0);
  await settled();
  const f = await figures(acks, after);
  log(
    `acks = ${acks}: committed ${f.committed}, marked sent ${f.markedSent}, lost ${f.lost}, duplicates ${f.duplicates}` +
      (f.lost > 0
        ? `; lost rows ${f.lostRows[0]!.id}..${f.lostRows.at(-1)!.id} (e.g. ${f.lostRows[0]!.event_type} of ${f.lostRows[0]!.aggregate_id})`
        : ''),
  );
  return f;
}

describe('the broker half of the guarantee: 3 brokers, the leader killed before its followers copied the batch', () => {
  it('acks = 1: events the outbox marked sent are lost, and the auditor shows them', async () => {
    const f = await killLeaderUnreplicated('1');
    expect(f.committed).toBeGreaterThan(50);
    expect(f.markedSent).toBe(f.committed);
    expect(f.lost).toBeGreaterThan(0);
    // The auditor's view: orders whose OrderCreated was marked sent and never arrived,
    // and the outbox rows behind every lost event (sent, never delivered).
    const report = await audit(system.pool);
    expect(report.ordersWithoutEvents).toBeGreaterThan(0);
    const lost = await sentNotDelivered(system.pool, { limit: 10_000 });
    expect(lost.count).toBe(f.lost);
    expect(lost.rows.map((r) => r.id)).toEqual(f.lostRows.map((r) => r.id));
    expect(report.pending).toBe(0);
    // Each lost row has the partition and offset the leader acknowledged; read back by
    // an independent client, that offset now holds another event (the old leader's log
    // was truncated and the new leader wrote later events there) or nothing at all.
    const onTopic = await topicNow();
    for (const row of lost.rows) {
      expect(row.offset, `row ${row.id}`).not.toBeNull();
      expect(onTopic.get(`${row.partition}@${row.offset}`), `row ${row.id}`).not.toBe(row.id);
    }
    const first = lost.rows[0]!;
    const there = onTopic.get(`${first.partition}@${first.offset}`);
    log(
      `lost row ${first.id} was acknowledged at orders.events[${first.partition}]@${first.offset}, ` +
        (there ? `which now holds event ${there}` : 'which no longer exists'),
    );
    // Not asserted for the other rows with acks = 1: a row whose first send was partly
    // written (the non-idempotent producer's duplicates) and whose resend went to the
    // doomed leader arrived through the first copy, while its recorded offset is gone.
    const elsewhere =
      (await acknowledgedAt(f.after)).filter((row) => onTopic.get(row.at ?? '') !== row.id).length -
      lost.count;
    log(`acks = 1: ${elsewhere} delivered row(s) whose acknowledged copy was lost too`);
    // (c) The seed's metric agrees with the outbox across the leader moves.
    const { rows } = await system.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NOT NULL',
    );
    expect(await publishedMetric()).toBe(rows[0]!.n);
  });

  it('acks = all: the same click loses nothing (at most duplicates, caught by the inbox)', async () => {
    const before = await audit(system.pool);
    const f = await killLeaderUnreplicated('all');
    expect(f.committed).toBeGreaterThan(50);
    expect(f.markedSent).toBe(f.committed);
    expect(f.lost).toBe(0);
    const report = await audit(system.pool);
    expect(report.ordersWithoutEvents).toBe(before.ordersWithoutEvents);
    expect(report.doubleProcessed).toBe(0);
    expect(report.duplicatesCaught).toBe(report.duplicatesDelivered);
    // Every row is at the partition and offset the broker acknowledged, across the
    // leader moves, read back by an independent client.
    const onTopic = await topicNow();
    for (const row of await acknowledgedAt(f.after))
      expect(onTopic.get(row.at ?? ''), `row ${row.id}`).toBe(row.id);
    // (c) No gap, no double count in outbox_published_total: one per row marked sent.
    const { rows } = await system.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NOT NULL',
    );
    expect(await publishedMetric()).toBe(rows[0]!.n);
    const restarts = system.supervisor
      .status()
      .filter((s) => s.name.startsWith('publisher-worker'))
      .reduce((n, s) => n + s.restarts, 0);
    expect(restarts).toBe(0); // the metric is per process: a restart would reset it
  });
});
