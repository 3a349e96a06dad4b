import type { Kafka } from 'kafkajs';
import { startConnect, stopConnect } from '@outbox/dev-stack';
import { pick, type BenchContext, type ScenarioResult } from '../env/context.ts';
import { createSchema, settle, type BenchSchema } from '../env/db.ts';
import { cpuSnapshot, cpuUse } from '../env/cpu.ts';
import { createTopic, deleteTopics, kafkaClient, topicSize } from '../env/kafka.ts';
import {
  pendingWhere,
  peerDdl,
  restoreBacklog,
  saveBacklog,
  SEED_DDL,
  type TableKind,
} from '../env/tables.ts';
import { startWorker, type Worker } from '../env/worker.ts';
import type { PublisherSpec } from '../publishers/child.ts';
import { markdownTable } from '../report/table.ts';
import { alternate, fmt, ratio, spread, summarize, type Summary } from '../stats.ts';
import type { CeilingsResult } from './ceilings.ts';
import { DRAIN_TIMEOUT_SECONDS, DRAIN_VARIANTS, type DrainVariant } from './drain-variants.ts';

/**
 * Scenario 2, relay drain: a backlog of pending events (100k in full mode, realistic
 * ~300–500 B payloads) and the time until all are acked by Kafka and marked sent, for
 * each publisher side by side, each replica in its own process, alternating, repeated.
 * A variant too slow to drain the backlog within the cap is stopped there and its
 * rate (events sent / seconds) measured over that window; its drain time is then
 * extrapolated and marked so.
 */

interface RunSample {
  round: number;
  sent: number;
  seconds: number;
  drained: boolean;
  rate: number;
  /** Messages that reached the topic (≥ sent: at-least-once). */
  produced: number;
  /** CPU used during the run, % of one core: machine, postgres, kafka, publishers. */
  cpu: Record<string, number>;
}

export interface DrainVariantResult {
  key: string;
  label: string;
  rate: Summary;
  drainSeconds: Summary;
  extrapolated: boolean;
  runs: RunSample[];
}

export async function benchDrain(ctx: BenchContext): Promise<ScenarioResult> {
  const ceilings = ctx.shared.ceilings as CeilingsResult | undefined;
  const backlog = ctx.quick ? 2_000 : 100_000;
  const capSeconds = ctx.quick ? 1.5 : 15;
  const variants = pick(
    ctx,
    DRAIN_VARIANTS.filter((v) => !v.extra || ctx.variants.includes(v.key)),
  );
  const prefix = 'bench.drain.';
  const topic = `${prefix}orders.events`;
  const kafka = kafkaClient(ctx.kafkaBrokers, 'bench-drain');
  await createTopic(kafka, topic);
  const schemas: Partial<Record<TableKind, BenchSchema>> = {};
  // Its own schema: the connector's slot must not see the other variants' backlogs.
  let cdcSchema: BenchSchema | undefined;
  const runs: Record<string, RunSample[]> = Object.fromEntries(variants.map((v) => [v.key, []]));
  try {
    schemas.ours = await createSchema(ctx.databaseUrl, 'bench_drain_ours');
    if (variants.some((v) => v.kind === 'cdc')) {
      cdcSchema = await createSchema(ctx.databaseUrl, 'bench_drain_cdc');
      await saveBacklog(cdcSchema.pool, 'ours', backlog);
    }
    schemas.seed = await createSchema(ctx.databaseUrl, 'bench_drain_seed', { migrated: false });
    await schemas.seed.pool.query(SEED_DDL);
    schemas.peer = await createSchema(ctx.databaseUrl, 'bench_drain_peer', { migrated: false });
    await schemas.peer.pool.query(peerDdl('bench_drain_peer'));
    for (const kind of ['ours', 'seed', 'peer'] as const) {
      await saveBacklog(schemas[kind]!.pool, kind, backlog);
    }

    await alternate(ctx.rounds, variants, async (variant, round) => {
      const schema = schemas[variant.table]!;
      const limits = {
        backlog,
        capSeconds: variant.slow ? capSeconds : DRAIN_TIMEOUT_SECONDS,
        topic,
      };
      const { kind } = variant;
      const sample =
        kind === 'cdc'
          ? await drainCdcOnce(ctx, kafka, cdcSchema!, limits)
          : await drainOnce(ctx, kafka, schema, { ...variant, kind }, limits);
      runs[variant.key]!.push({ round, ...sample });
      ctx.progress(
        `drain round ${round}/${ctx.rounds} ${variant.key}: ${fmt(sample.sent)} sent in ${fmt(sample.seconds, 1)} s = ${fmt(sample.rate)} events/s${sample.drained ? '' : ' (capped)'}`,
      );
    });
  } finally {
    for (const s of Object.values(schemas)) await s?.drop();
    await cdcSchema?.drop();
    await deleteTopics(kafka, prefix).catch(() => undefined);
  }

  const results: DrainVariantResult[] = variants.map((v) => {
    const r = runs[v.key]!;
    return {
      key: v.key,
      label: v.label,
      rate: summarize(r.map((s) => s.rate)),
      drainSeconds: summarize(r.map((s) => (s.drained ? s.seconds : backlog / s.rate))),
      extrapolated: r.some((s) => !s.drained),
      runs: r,
    };
  });
  const get = (key: string) => results.find((r) => r.key === key)?.rate.median ?? NaN;
  const lower = ceilings ? Math.min(ceilings.rates.db.median, ceilings.rates.kafka.median) : NaN;
  const table = markdownTable(
    [
      'publisher',
      'events/s median (min–max)',
      `time for ${fmt(backlog)} (s)`,
      'vs seed row-by-row (target ≥ 10×)',
      'vs peer (target ≥ 2×)',
      'vs lower ceiling (target ≥ 50%)',
      'CPU, % of a core: machine / PG / Kafka / publishers',
    ],
    results.map((r) => [
      r.label,
      spread(r.rate),
      `${fmt(r.drainSeconds.median, 1)}${r.extrapolated ? ' (extrapolated)' : ''}`,
      ratio(r.rate.median, get('seed-row')),
      ratio(r.rate.median, get('peer')),
      ratio(r.rate.median, lower),
      cpuCell(r.runs),
    ]),
  );
  return {
    title: `Relay drain: ${fmt(backlog)} pending events until acked and marked sent`,
    table: `${table}\n\nThe seed's and the peer's publishers ran ${capSeconds} s each (they would need minutes for the backlog); their rate is over that window and the drain time is backlog ÷ rate. Every replica is a process of its own; all drive the same kafkajs producer configuration (idempotent, acks = all).`,
    data: { backlog, capSeconds, lowerCeiling: lower, variants: results },
    chartTitle: 'relay drain: events/s, ratio to the seed’s row-by-row publisher',
    chart: results.map((r) => ({
      label: r.key,
      value: r.rate.median / get('seed-row'),
      ...(r.key.startsWith('ours') ? { target: 10 } : {}),
    })),
  };
}

async function drainOnce(
  ctx: BenchContext,
  kafka: Kafka,
  schema: BenchSchema,
  variant: DrainVariant & { kind: PublisherSpec['kind'] },
  { backlog, capSeconds, topic }: { backlog: number; capSeconds: number; topic: string },
): Promise<Omit<RunSample, 'round'>> {
  const pool = schema.pool;
  const pending = pendingWhere(variant.table);
  // The replicas boot (tsx, connections, a warm-up produce) while the backlog is put
  // back; none touches the outbox before 'go'.
  const booting = Promise.all(
    Array.from({ length: variant.replicas }, (_, i) =>
      startWorker('publishers/child.ts', {
        kind: variant.kind,
        databaseUrl: ctx.databaseUrl,
        schema: schema.name,
        brokers: ctx.kafkaBrokers,
        topic,
        trace: ctx.trace,
        ...(variant.kind === 'ours'
          ? {
              ours: {
                sharded: variant.sharded ?? true,
                listen: true,
                replicaId: `${variant.key}-${i}`,
                ...(variant.batchSize ? { batchSize: variant.batchSize } : {}),
                ...(variant.lanes ? { lanes: variant.lanes } : {}),
              },
            }
          : {}),
      } satisfies PublisherSpec),
    ),
  );
  if (variant.table === 'ours') await pool.query('TRUNCATE outbox_relay_members');
  await restoreBacklog(pool, variant.table);
  await settle(pool, ctx.quick, 'outbox');
  const workers: Worker[] = await booting;
  const before = await topicSize(kafka, topic);
  const groups = {
    kafka: ctx.kafkaPid ? [ctx.kafkaPid] : [],
    publishers: workers.map((w) => w.child.pid!),
  };
  const cpu0 = cpuSnapshot(groups);
  let cpu: Record<string, number> = {};
  const t0 = performance.now();
  for (const w of workers) w.send({ type: 'go' });
  let drained = false;
  let lastReport = t0;
  let seconds = 0;
  let left = backlog;
  try {
    for (;;) {
      const { rows } = await pool.query<{ left: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM outbox WHERE ${pending}) AS left`,
      );
      seconds = (performance.now() - t0) / 1000;
      if (!rows[0]?.left) {
        drained = true;
        left = 0;
        break;
      }
      if (seconds >= capSeconds) {
        left = await countPending(pool, pending);
        break;
      }
      if (performance.now() - lastReport > 5_000) {
        lastReport = performance.now();
        ctx.progress(`  ${variant.key}: ${fmt(await countPending(pool, pending))} pending`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    cpu = cpuUse(cpu0, cpuSnapshot(groups));
    await Promise.all(workers.map((w) => w.stop()));
  }
  const sent = backlog - left;
  const produced = (await topicSize(kafka, topic)) - before;
  return { sent, seconds, drained, rate: sent / seconds, produced, cpu };
}

/**
 * Debezium after an outage: Connect starts (creating the slot) and is stopped with the
 * slot kept, the backlog is inserted while it is down, then it is started again and
 * the clock runs until the backlog is on the topic. Drained means published here (the
 * confirmer's marks would follow a second later); the slot is dropped at the end.
 */
async function drainCdcOnce(
  ctx: BenchContext,
  kafka: Kafka,
  schema: BenchSchema,
  { backlog, capSeconds, topic }: { backlog: number; capSeconds: number; topic: string },
): Promise<Omit<RunSample, 'round'>> {
  const opts = { log: (line: string) => ctx.progress(`  cdc: ${line}`) };
  const connect = { ...opts, schema: schema.name, topic };
  await startConnect(connect);
  // Down, with the slot kept: it holds the WAL of the backlog inserted next.
  await stopConnect(opts, { keepSlot: true });
  await restoreBacklog(schema.pool, 'ours');
  await settle(schema.pool, ctx.quick, 'outbox');
  const before = await topicSize(kafka, topic);
  const t0 = performance.now();
  let cpu: Record<string, number> = {};
  let produced = 0;
  let seconds = 0;
  try {
    const again = await startConnect(connect);
    const groups = { kafka: ctx.kafkaPid ? [ctx.kafkaPid] : [], publishers: [again.pid] };
    const cpu0 = cpuSnapshot(groups);
    ctx.progress(`  cdc: Connect running again after ${fmt((performance.now() - t0) / 1000, 1)} s`);
    let lastReport = performance.now();
    for (;;) {
      produced = (await topicSize(kafka, topic)) - before;
      seconds = (performance.now() - t0) / 1000;
      if (produced >= backlog || seconds >= capSeconds) break;
      if (performance.now() - lastReport > 5_000) {
        lastReport = performance.now();
        ctx.progress(`  cdc: ${fmt(produced)} of ${fmt(backlog)} on the topic`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    cpu = cpuUse(cpu0, cpuSnapshot(groups));
  } finally {
    await stopConnect(opts);
  }
  const sent = Math.min(produced, backlog);
  return { sent, seconds, drained: produced >= backlog, rate: sent / seconds, produced, cpu };
}

async function countPending(pool: BenchSchema['pool'], pending: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox WHERE ${pending}`,
  );
  return rows[0]?.n ?? 0;
}

/** Median CPU use over the runs: machine / postgres / kafka / publishers. */
function cpuCell(runs: RunSample[]): string {
  const med = (k: string) => summarize(runs.map((r) => r.cpu[k] ?? NaN)).median;
  return ['machine', 'postgres', 'kafka', 'publishers'].map((k) => fmt(med(k))).join(' / ');
}
