import { claimBatch, markSent, withTransaction, type OutboxRow } from '@outbox/core';
import type pg from 'pg';
import type { BenchContext, ScenarioResult } from '../env/context.ts';
import { createSchema, type BenchSchema } from '../env/db.ts';
import { fillOutbox, history } from '../env/tables.ts';
import { markdownTable } from '../report/table.ts';
import { fmt, percentile, ratio, spread, summarize, type Summary } from '../stats.ts';
import { benchCleanup, type CleanupResult } from './cleanup.ts';

/**
 * Scenario 6, growth: does the claim slow down as sent rows pile up? Core's claim
 * (500 rows, SKIP LOCKED) + markSent + COMMIT is timed batch by batch on outbox tables
 * holding 0, 1M and 10M already-sent rows (full mode; 100k in quick mode), the batches
 * interleaved across the tables so noise falls on all alike; and on a table whose 1M
 * rows were just marked sent and not yet vacuumed (dead tuples in the pending index).
 *
 * The growth tables are UNLOGGED: 11M rows cannot be written with WAL within the
 * run's 20-minute budget on this machine (~12 s per 1M logged, ~7 s unlogged). It is
 * the stricter test of the ±20% target: WAL is a constant cost per claimed row at any
 * table size, so without it the size-dependent part (index depth, cache misses) weighs
 * more in the ratio. History rows carry a constant ~400 B payload (no per-row JSON
 * building); pending rows get the realistic varied payloads.
 */
const BATCH = 500;

interface GrowthTable {
  key: string;
  label: string;
  rows: number;
  schema?: BenchSchema;
}

export interface GrowthResult {
  batchSize: number;
  tables: {
    key: string;
    rows: number;
    claimMs: Summary;
    claimMarkMs: Summary;
    perRound: number[][];
  }[];
  dead: {
    rows: number;
    firstClaimMs: number;
    claimMs: Summary;
    vacuumSeconds: number;
    reference: Summary;
  };
  generationSeconds: Record<string, number>;
  cleanup: CleanupResult;
}

export async function benchGrowth(ctx: BenchContext): Promise<ScenarioResult> {
  const mid = ctx.quick ? 50_000 : 1_000_000;
  const tables: GrowthTable[] = [
    { key: '0', label: '0 sent rows', rows: 0 },
    { key: 'mid', label: `${fmt(mid)} sent rows`, rows: mid },
    ...(ctx.quick ? [] : [{ key: 'big', label: '10,000,000 sent rows', rows: 10_000_000 }]),
  ];
  const pending = ctx.quick ? 2_000 : 10_000;
  const generationSeconds: Record<string, number> = {};
  const claimMs: Record<string, number[][]> = {};
  const claimMarkMs: Record<string, number[]> = {};
  let dead: GrowthResult['dead'] | undefined;
  let cleanup: CleanupResult | undefined;
  try {
    for (const t of tables) {
      t.schema = await createSchema(ctx.databaseUrl, `bench_growth_${t.key}`);
      await t.schema.pool.query('ALTER TABLE outbox SET UNLOGGED');
      // Vacuum only when the scenario says so.
      await t.schema.pool.query('ALTER TABLE outbox SET (autovacuum_enabled = false)');
      claimMs[t.key] = [];
      claimMarkMs[t.key] = [];
    }
    const [empty, midTable] = [tables[0]!, tables[1]!];

    // The mid table's rows are relayed for real (pending, then marked sent in one
    // UPDATE), so its pending index holds their dead entries until VACUUM.
    let t0 = performance.now();
    await history(midTable.schema!.pool, mid, { pending: true }, ctx);
    await midTable.schema!.pool.query(`UPDATE outbox SET sent_at = now(), topic = 'orders.events'`);
    generationSeconds[midTable.key] = (performance.now() - t0) / 1000;
    ctx.progress(
      `growth: ${fmt(mid)} rows written and marked sent in ${fmt(generationSeconds[midTable.key]!, 0)} s`,
    );

    // Dead tuples before vacuum: claims on that table, interleaved with the empty one.
    for (const t of [empty, midTable]) await fillOutbox(t.schema!.pool, 'ours', pending, 1);
    await empty.schema!.pool.query('VACUUM ANALYZE outbox');
    await midTable.schema!.pool.query('ANALYZE outbox');
    const deadSamples: number[] = [];
    const refSamples: number[] = [];
    for (let b = 0; b < pending / BATCH; b += 1) {
      deadSamples.push((await claimOnce(midTable.schema!.pool)).claim);
      refSamples.push((await claimOnce(empty.schema!.pool)).claim);
    }
    t0 = performance.now();
    await midTable.schema!.pool.query('VACUUM ANALYZE outbox');
    dead = {
      rows: mid,
      firstClaimMs: deadSamples[0]!,
      claimMs: summarize(deadSamples),
      vacuumSeconds: (performance.now() - t0) / 1000,
      reference: summarize(refSamples),
    };
    ctx.progress(
      `growth: dead tuples: first claim ${fmt(dead.firstClaimMs)} ms, median ${fmt(dead.claimMs.median, 1)} ms; VACUUM ${fmt(dead.vacuumSeconds, 1)} s`,
    );

    for (const t of tables.slice(2)) {
      t0 = performance.now();
      await history(t.schema!.pool, t.rows, { pending: false }, ctx);
      generationSeconds[t.key] = (performance.now() - t0) / 1000;
      ctx.progress(
        `growth: ${fmt(t.rows)} sent rows generated in ${fmt(generationSeconds[t.key]!, 0)} s`,
      );
    }

    for (let round = 1; round <= ctx.rounds; round += 1) {
      for (const t of tables) {
        await fillOutbox(t.schema!.pool, 'ours', pending, 1 + round * pending);
        await t.schema!.pool.query('VACUUM ANALYZE outbox');
      }
      const perTable: Record<string, number[]> = Object.fromEntries(tables.map((t) => [t.key, []]));
      for (let b = 0; b < pending / BATCH; b += 1) {
        // Rotate who goes first in each batch.
        for (let k = 0; k < tables.length; k += 1) {
          const t = tables[(b + k) % tables.length]!;
          const r = await claimOnce(t.schema!.pool);
          perTable[t.key]!.push(r.claim);
          claimMarkMs[t.key]!.push(r.total);
        }
      }
      for (const t of tables) claimMs[t.key]!.push(perTable[t.key]!);
      ctx.progress(
        `growth round ${round}/${ctx.rounds}: claim p50 ${tables.map((t) => `${t.key} ${fmt(percentile(perTable[t.key]!, 50), 1)} ms`).join(', ')}`,
      );
    }
    cleanup = await benchCleanup(ctx);
  } finally {
    for (const t of tables) await t.schema?.drop();
  }

  const summaries = tables.map((t) => ({
    key: t.key,
    label: t.label,
    rows: t.rows,
    // Median per round, then the median and spread of those.
    claimMs: summarize(claimMs[t.key]!.map((r) => percentile(r, 50))),
    claimMarkMs: summarize(claimMarkMs[t.key]!),
    perRound: claimMs[t.key]!,
  }));
  const base = summaries[0]!.claimMs.median;
  const table = markdownTable(
    [
      'outbox holds',
      'claim 500 ms, median of rounds (min–max)',
      'claim + mark + commit ms (median)',
      'ratio to 0 rows (target within ±20%)',
    ],
    [
      ...summaries.map((s) => [
        s.label,
        spread(s.claimMs, 1),
        fmt(s.claimMarkMs.median, 1),
        ratio(s.claimMs.median, base),
      ]),
      [
        `${fmt(dead!.rows)} rows just marked sent, not vacuumed`,
        `${spread(dead!.claimMs, 1)}; first claim ${fmt(dead!.firstClaimMs, 1)}`,
        '–',
        `${ratio(dead!.claimMs.median, dead!.reference.median)} of the 0-row table measured alongside`,
      ],
    ],
  );
  const data: GrowthResult = {
    batchSize: BATCH,
    tables: summaries,
    dead: dead!,
    generationSeconds,
    cleanup: cleanup!,
  };
  return {
    title: 'Growth: claim latency against already-sent rows, and cleanup',
    table: `${table}\n\nVACUUM of the ${fmt(dead!.rows)} dead rows took ${fmt(dead!.vacuumSeconds, 1)} s. Growth tables are UNLOGGED (see the scenario's comment): the size-dependent part weighs more, so the ±20% test is stricter.\n\n${cleanup!.table}`,
    data,
    chartTitle: 'growth: claim latency, ratio to the empty table (target 0.8–1.2)',
    chart: [
      ...summaries.map((s) => ({ label: s.label, value: s.claimMs.median / base, target: 1.2 })),
      {
        label: 'just marked sent, not vacuumed',
        value: dead!.claimMs.median / dead!.reference.median,
        target: 1.2,
      },
    ],
  };
}

/** Claims BATCH rows and marks them sent, timing the claim and the whole transaction. */
async function claimOnce(pool: pg.Pool): Promise<{ claim: number; total: number }> {
  const t0 = performance.now();
  let claim = 0;
  await withTransaction(pool, async (client) => {
    const c0 = performance.now();
    const { rows } = await client.query<OutboxRow>(claimBatch(BATCH));
    claim = performance.now() - c0;
    if (rows.length === 0) throw new Error('nothing to claim: the pending rows ran out');
    await client.query(
      markSent(
        rows.map((r) => r.id),
        rows.map(() => 'orders.events'),
      ),
    );
  });
  return { claim, total: performance.now() - t0 };
}
