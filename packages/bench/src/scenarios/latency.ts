import { readFileSync } from 'node:fs';
import { startConnect, stopConnect } from '@outbox/dev-stack';
import { cpuSnapshot, cpuUse } from '../env/cpu.ts';
import { pick, type BenchContext, type ScenarioResult } from '../env/context.ts';
import { createSchema, type BenchSchema } from '../env/db.ts';
import { EFFECTS_DDL } from '../env/tables.ts';
import { createTopic, deleteTopics, kafkaClient } from '../env/kafka.ts';
import { peerDdl, SEED_DDL, type TableKind } from '../env/tables.ts';
import { startWorker, type Worker } from '../env/worker.ts';
import type { Collected, ConsumerSpec } from '../consumer/child.ts';
import type { WriteResult, WriteRun, WriterSpec } from '../latency/writer.ts';
import type { PublisherSpec } from '../publishers/child.ts';
import { markdownTable } from '../report/table.ts';
import { alternate, fmt, percentile, summarize, type Summary } from '../stats.ts';

/**
 * Scenario 3, end-to-end latency: from the business COMMIT (writer process) to the
 * consumer's COMMIT (consumer process), both read on the machine's monotonic clock,
 * at fixed offered loads, for three ways of waking the relay:
 *   seed  — the seed's batch publisher, polling on its 200 ms ticker;
 *   ours  — core's relay: LISTEN/NOTIFY, 5 s fallback poll;
 *   peer  — pg-transactional-outbox's polling listener (250 ms, as its README);
 *   cdc   — Debezium's outbox connector on Kafka Connect (dev-stack's startConnect),
 *           the seed's alternative, on the same outbox table as ours.
 * Per round, each variant's relay runs once through the three rates. Events not
 * consumed within the wait after the load count as slower than that wait.
 */
interface LatencyVariant {
  key: 'seed' | 'ours' | 'peer' | 'cdc';
  label: string;
  table: TableKind;
  /** A relay process of ours, or Kafka Connect with Debezium's outbox connector. */
  kind: PublisherSpec['kind'] | 'cdc';
}

const VARIANTS: LatencyVariant[] = [
  {
    key: 'seed',
    label: 'seed: batch publisher, polling 200 ms',
    table: 'seed',
    kind: 'seed-batch',
  },
  { key: 'ours', label: 'ours: LISTEN/NOTIFY + 5 s fallback poll', table: 'ours', kind: 'ours' },
  {
    key: 'peer',
    label: 'peer: pg-transactional-outbox, polling 250 ms',
    table: 'peer',
    kind: 'peer',
  },
  // The seed's alternative: the same outbox table (ours) read from the WAL. Its own
  // schema, so its slot never sees the other variants' rows.
  {
    key: 'cdc',
    label: 'Debezium CDC: Kafka Connect, WAL, poll.interval.ms 50',
    table: 'ours',
    kind: 'cdc',
  },
];
const RATES = [200, 1_000, 3_000];
const PERCENTILES = [50, 95, 99, 100] as const;

interface RunSample {
  round: number;
  offered: number;
  committed: number;
  delivered: number;
  /** Achieved write rate (events/s). */
  writeRate: number;
  p: Record<(typeof PERCENTILES)[number], number>;
  /**
   * Medians of the three legs (wall clock, ms resolution): business COMMIT → the
   * relay's produce (Kafka CreateTime), → the consumer receiving it, → its COMMIT.
   */
  legs: { toProduce: number; toConsumer: number; toCommit: number };
  /** Every latency (ms), undelivered ones as null. */
  latencies: (number | null)[];
  /** The relay's process (ours: its Node child; cdc: Connect's JVM): % of one core during the run, and RSS after it. */
  relayCpu: number;
  relayRssMb: number;
}

export async function benchLatency(ctx: BenchContext): Promise<ScenarioResult> {
  const seconds = ctx.quick ? 0.5 : 4;
  const waitSeconds = ctx.quick ? 1 : 3;
  const variants = pick(ctx, VARIANTS);
  const prefix = 'bench.latency.';
  const topic = `${prefix}orders.events`;
  const kafka = kafkaClient(ctx.kafkaBrokers, 'bench-latency');
  await createTopic(kafka, topic);
  const schemas: Partial<Record<TableKind | 'cdc' | 'consumer', BenchSchema>> = {};
  const runs: Record<string, RunSample[]> = {};
  let writer: Worker | undefined;
  let consumer: Worker | undefined;
  try {
    schemas.ours = await createSchema(ctx.databaseUrl, 'bench_latency_ours');
    schemas.seed = await createSchema(ctx.databaseUrl, 'bench_latency_seed', { migrated: false });
    await schemas.seed.pool.query(SEED_DDL);
    schemas.peer = await createSchema(ctx.databaseUrl, 'bench_latency_peer', { migrated: false });
    await schemas.peer.pool.query(peerDdl('bench_latency_peer'));
    schemas.cdc = await createSchema(ctx.databaseUrl, 'bench_latency_cdc');
    for (const kind of ['ours', 'seed', 'peer', 'cdc'] as const) {
      await schemas[kind]!.pool.query(
        'CREATE TABLE bench_orders (id UUID PRIMARY KEY, user_id INT NOT NULL, sku TEXT NOT NULL, quantity INT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())',
      );
    }
    schemas.consumer = await createSchema(ctx.databaseUrl, 'bench_latency_consumer');
    await schemas.consumer.pool.query(EFFECTS_DDL);
    consumer = await startWorker('consumer/child.ts', {
      databaseUrl: ctx.databaseUrl,
      schema: schemas.consumer.name,
      brokers: ctx.kafkaBrokers,
      topic,
      groupId: `bench-latency-${Date.now()}`,
      mode: 'batch',
      inbox: true,
      fromBeginning: false,
    } satisfies ConsumerSpec);
    writer = await startWorker('latency/writer.ts', {
      databaseUrl: ctx.databaseUrl,
    } satisfies WriterSpec);

    let runIndex = 0;
    await alternate(ctx.rounds, variants, async (variant, round) => {
      const schema = schemas[variant.kind === 'cdc' ? 'cdc' : variant.table]!;
      const relay =
        variant.kind === 'cdc'
          ? await startCdcRelay(ctx, schema.name, topic)
          : withPid(
              await startWorker('publishers/child.ts', {
                kind: variant.kind,
                databaseUrl: ctx.databaseUrl,
                schema: schema.name,
                brokers: ctx.kafkaBrokers,
                topic,
                ...(variant.kind === 'ours' ? { ours: { sharded: true, listen: true } } : {}),
              } satisfies PublisherSpec),
            );
      relay.send({ type: 'go' });
      try {
        if (variant.kind === 'cdc') {
          // Connect's JVM has just started: a warm-up load, not measured, so that the
          // first rate does not pay for class loading and the JIT (ours' producer
          // warms up in its child before "go" too).
          const warm: WriteRun = { schema: schema.name, table: variant.table, rate: 500, seconds };
          await writer!.request<WriteResult>({ type: 'run', run: warm });
          await new Promise((r) => setTimeout(r, waitSeconds * 1000));
        }
        for (const rate of RATES) {
          runIndex += 1;
          await resetOutbox(schema, variant.table, runIndex);
          await consumer!.request({ type: 'collect' });
          const run: WriteRun = { schema: schema.name, table: variant.table, rate, seconds };
          const cpuBefore = cpuSnapshot({ relay: [relay.pid] });
          const written = await writer!.request<WriteResult>({ type: 'run', run });
          const deadline = performance.now() + waitSeconds * 1000;
          while (performance.now() < deadline) {
            if ((await consumer!.request<number>({ type: 'count' })) >= written.ids.length) break;
            await new Promise((r) => setTimeout(r, 100));
          }
          const got = await consumer!.request<Collected>({ type: 'collect' });
          const relayCpu = cpuUse(cpuBefore, cpuSnapshot({ relay: [relay.pid] })).relay ?? 0;
          const sample = { ...join(round, written, got), relayCpu, relayRssMb: rssMb(relay.pid) };
          (runs[`${variant.key}@${rate}`] ??= []).push(sample);
          ctx.progress(
            `latency round ${round}/${ctx.rounds} ${variant.key} @ ${fmt(rate)}/s: wrote ${fmt(sample.writeRate)}/s, delivered ${fmt(sample.delivered)}/${fmt(sample.committed)}, p50 ${fmtMs(sample.p[50])} p99 ${fmtMs(sample.p[99])} max ${fmtMs(sample.p[100])}; relay CPU ${fmt(relayCpu)}% RSS ${fmt(sample.relayRssMb)} MB; legs p50: →produce ${fmt(sample.legs.toProduce)} →consumer ${fmt(sample.legs.toConsumer)} →commit ${fmt(sample.legs.toCommit)} ms`,
          );
        }
      } finally {
        await relay.stop();
      }
    });
  } finally {
    await writer?.stop();
    await consumer?.stop();
    for (const s of Object.values(schemas)) await s?.drop();
    await deleteTopics(kafka, prefix).catch(() => undefined);
  }

  const rows: string[][] = [];
  const results = [];
  for (const rate of RATES) {
    for (const v of variants) {
      const r = runs[`${v.key}@${rate}`] ?? [];
      const p = Object.fromEntries(
        PERCENTILES.map((q) => [q, summarize(r.map((s) => s.p[q]))]),
      ) as Record<(typeof PERCENTILES)[number], Summary>;
      const delivered = r.reduce((n, s) => n + s.delivered, 0);
      const committed = r.reduce((n, s) => n + s.committed, 0);
      const writeRate = summarize(r.map((s) => s.writeRate));
      const relayCpu = summarize(r.map((s) => s.relayCpu));
      const relayRssMb = summarize(r.map((s) => s.relayRssMb));
      results.push({
        key: v.key,
        rate,
        p,
        delivered,
        committed,
        writeRate,
        relayCpu,
        relayRssMb,
        runs: r,
      });
      rows.push([
        fmt(rate),
        v.label,
        fmt(writeRate.median),
        ...PERCENTILES.map((q) => `${fmtMs(p[q].median)} (${fmtMs(p[q].min)}–${fmtMs(p[q].max)})`),
        `${fmt((delivered / Math.max(1, committed)) * 100, 1)}%`,
        fmt(relayCpu.median),
        fmt(relayRssMb.median),
      ]);
    }
  }
  const ours1k = results.find((r) => r.key === 'ours' && r.rate === 1_000);
  const table = markdownTable(
    [
      'offered ev/s',
      'wake-up',
      'written ev/s',
      'p50 ms',
      'p95 ms',
      'p99 ms',
      'max ms',
      `consumed within ${waitSeconds} s`,
      'relay CPU %',
      'relay RSS MB',
    ],
    rows,
  );
  return {
    title: 'End-to-end latency: business COMMIT → consumer COMMIT (ms, median of rounds (min–max))',
    table: `${table}\n\nTargets at 1,000 ev/s for ours: p50 ≤ 10 ms, p99 ≤ 50 ms. Each rate runs ${seconds} s of open-loop load; an event not consumed ${waitSeconds} s after the load ended counts as slower than anything measured (shown as “>”).`,
    data: { seconds, waitSeconds, rates: RATES, variants: results },
    chartTitle: 'latency at 1,000 ev/s: ours p50 and p99 as a share of the target (≤ 1 meets it)',
    chart: ours1k
      ? [
          { label: 'ours p50 / 10 ms', value: ours1k.p[50].median / 10, target: 1 },
          { label: 'ours p99 / 50 ms', value: ours1k.p[99].median / 50, target: 1 },
        ]
      : [],
  };
}

/**
 * Kafka Connect with the Debezium outbox connector on `schema`, as a relay the round
 * starts and stops like the others. Its slot is created at start (no snapshot: only
 * rows committed after it are published) and dropped at stop, with its offsets.
 */
async function startCdcRelay(ctx: BenchContext, schema: string, topic: string): Promise<Relay> {
  const opts = { log: (line: string) => ctx.progress(line) };
  const { pid } = await startConnect({ ...opts, schema, topic });
  return { pid, send: () => undefined, stop: () => stopConnect(opts) };
}

/** What a round needs of its relay, whichever it is. */
type Relay = Pick<Worker, 'send' | 'stop'> & { pid: number };

function withPid(worker: Worker): Relay {
  return { pid: worker.child.pid ?? 0, send: (m) => worker.send(m), stop: () => worker.stop() };
}

/** Resident memory of a process (MB), 0 once it is gone. */
function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** An empty outbox whose next ids cannot collide with an earlier run's. */
async function resetOutbox(schema: BenchSchema, table: TableKind, runIndex: number): Promise<void> {
  await schema.pool.query('TRUNCATE outbox');
  if (table !== 'peer') {
    await schema.pool.query(`ALTER SEQUENCE outbox_id_seq RESTART WITH ${runIndex * 10_000_000}`);
  }
}

function join(
  round: number,
  written: WriteResult,
  got: Collected,
): Omit<RunSample, 'relayCpu' | 'relayRssMb'> {
  const consumedAt = new Map<string, number>();
  const index = new Map<string, number>();
  got.ids.forEach((id, i) => {
    if (!consumedAt.has(id)) {
      consumedAt.set(id, got.committedAt[i]!);
      index.set(id, i);
    }
  });
  const toProduce: number[] = [];
  const toConsumer: number[] = [];
  const toCommit: number[] = [];
  written.ids.forEach((id, i) => {
    const j = index.get(id);
    if (j === undefined) return;
    toProduce.push(got.producedWall[j]! - written.committedWall[i]!);
    toConsumer.push(got.receivedWall[j]! - got.producedWall[j]!);
    toCommit.push(got.committedAt[j]! - got.receivedAt[j]!);
  });
  const latencies = written.ids.map((id, i) => {
    const t1 = consumedAt.get(id);
    return t1 === undefined ? null : t1 - written.committedAt[i]!;
  });
  // Undelivered events are slower than every delivered one: rank them last.
  const ranked = latencies.map((l) => l ?? Number.POSITIVE_INFINITY);
  const p = Object.fromEntries(
    PERCENTILES.map((q) => [q, percentile(ranked, q)]),
  ) as RunSample['p'];
  return {
    round,
    offered: written.offered,
    committed: written.ids.length,
    delivered: latencies.filter((l) => l !== null).length,
    writeRate: written.ids.length / written.seconds,
    p,
    legs: {
      toProduce: percentile(toProduce, 50),
      toConsumer: percentile(toConsumer, 50),
      toCommit: percentile(toCommit, 50),
    },
    latencies: latencies.map((l) => (l === null ? null : Math.round(l * 100) / 100)),
  };
}

const fmtMs = (ms: number) => (ms === Number.POSITIVE_INFINITY ? '>' : fmt(ms, ms < 10 ? 1 : 0));
