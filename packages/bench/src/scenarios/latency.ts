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
 *   peer  — pg-transactional-outbox's polling listener (250 ms, as its README).
 * Per round, each variant's relay runs once through the three rates. Events not
 * consumed within the wait after the load count as slower than that wait.
 */
interface LatencyVariant {
  key: 'seed' | 'ours' | 'peer';
  label: string;
  table: TableKind;
  kind: PublisherSpec['kind'];
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
}

export async function benchLatency(ctx: BenchContext): Promise<ScenarioResult> {
  const seconds = ctx.quick ? 0.5 : 4;
  const waitSeconds = ctx.quick ? 1 : 3;
  const variants = pick(ctx, VARIANTS);
  const prefix = 'bench.latency.';
  const topic = `${prefix}orders.events`;
  const kafka = kafkaClient(ctx.kafkaBrokers, 'bench-latency');
  await createTopic(kafka, topic);
  const schemas: Partial<Record<TableKind | 'consumer', BenchSchema>> = {};
  const runs: Record<string, RunSample[]> = {};
  let writer: Worker | undefined;
  let consumer: Worker | undefined;
  try {
    schemas.ours = await createSchema(ctx.databaseUrl, 'bench_latency_ours');
    schemas.seed = await createSchema(ctx.databaseUrl, 'bench_latency_seed', { migrated: false });
    await schemas.seed.pool.query(SEED_DDL);
    schemas.peer = await createSchema(ctx.databaseUrl, 'bench_latency_peer', { migrated: false });
    await schemas.peer.pool.query(peerDdl('bench_latency_peer'));
    for (const kind of ['ours', 'seed', 'peer'] as const) {
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
      const schema = schemas[variant.table]!;
      const relay = await startWorker('publishers/child.ts', {
        kind: variant.kind,
        databaseUrl: ctx.databaseUrl,
        schema: schema.name,
        brokers: ctx.kafkaBrokers,
        topic,
        ...(variant.kind === 'ours' ? { ours: { sharded: true, listen: true } } : {}),
      } satisfies PublisherSpec);
      relay.send({ type: 'go' });
      try {
        for (const rate of RATES) {
          runIndex += 1;
          await resetOutbox(schema, variant.table, runIndex);
          await consumer!.request({ type: 'collect' });
          const run: WriteRun = { schema: schema.name, table: variant.table, rate, seconds };
          const written = await writer!.request<WriteResult>({ type: 'run', run });
          const deadline = performance.now() + waitSeconds * 1000;
          while (performance.now() < deadline) {
            if ((await consumer!.request<number>({ type: 'count' })) >= written.ids.length) break;
            await new Promise((r) => setTimeout(r, 100));
          }
          const got = await consumer!.request<Collected>({ type: 'collect' });
          const sample = join(round, written, got);
          (runs[`${variant.key}@${rate}`] ??= []).push(sample);
          ctx.progress(
            `latency round ${round}/${ctx.rounds} ${variant.key} @ ${fmt(rate)}/s: wrote ${fmt(sample.writeRate)}/s, delivered ${fmt(sample.delivered)}/${fmt(sample.committed)}, p50 ${fmtMs(sample.p[50])} p99 ${fmtMs(sample.p[99])} max ${fmtMs(sample.p[100])}; legs p50: →produce ${fmt(sample.legs.toProduce)} →consumer ${fmt(sample.legs.toConsumer)} →commit ${fmt(sample.legs.toCommit)} ms`,
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
      results.push({ key: v.key, rate, p, delivered, committed, writeRate, runs: r });
      rows.push([
        fmt(rate),
        v.label,
        fmt(writeRate.median),
        ...PERCENTILES.map((q) => `${fmtMs(p[q].median)} (${fmtMs(p[q].min)}–${fmtMs(p[q].max)})`),
        `${fmt((delivered / Math.max(1, committed)) * 100, 1)}%`,
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

/** An empty outbox whose next ids cannot collide with an earlier run's. */
async function resetOutbox(schema: BenchSchema, table: TableKind, runIndex: number): Promise<void> {
  await schema.pool.query('TRUNCATE outbox');
  if (table !== 'peer') {
    await schema.pool.query(`ALTER SEQUENCE outbox_id_seq RESTART WITH ${runIndex * 10_000_000}`);
  }
}

function join(round: number, written: WriteResult, got: Collected): RunSample {
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
