import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { pgConfig, silentLogger } from '@outbox/core';
import { audit, migrateLab } from '@outbox/lab';
import { startStack } from '@outbox/dev-stack';
import pg from 'pg';
import type { StatsMessage } from '../src/contract.ts';
import { StatsEngine } from '../src/stats/engine.ts';
import { fill } from './fill.ts';
import { startLoad } from './load.ts';

/**
 * `node scripts/pnpm.mjs --filter @outbox/dashboard-api bench:tick [-- --rows N]`:
 * what one stats tick costs when the tables are big. Fills a fresh schema with
 * `--rows` (default 1,000,000) sent outbox rows (with their orders, deliveries, inbox
 * rows, reservations) plus `--pending` (1,000) pending ones, then runs the real
 * StatsEngine on its 400 ms timer, idle and under `--rate` (100) orders/s of live
 * traffic, and prints the cost per tick, the cadence, what a from-scratch audit()
 * costs on the same data, and whether the two agree. The schema is dropped at the end
 * unless --keep.
 */
const args = process.argv.slice(2);
const num = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const rows = num('rows', 1_000_000);
const pendingRows = num('pending', 1_000);
const phaseSeconds = num('seconds', 20);
const rate = num('rate', 100);
const keep = args.includes('--keep');
const started = Date.now();
const progress = (line: string) =>
  process.stderr.write(`… [${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);

const stack = await startStack({ log: progress });
const schema = `bench_tick_${randomBytes(3).toString('hex')}`;
const admin = new pg.Client({ connectionString: stack.databaseUrl });
await admin.connect();
await admin.query(`CREATE SCHEMA ${schema}`);
const pool = new pg.Pool({
  ...pgConfig({ DATABASE_URL: stack.databaseUrl, DATABASE_SCHEMA: schema }),
  max: 5, // as main.ts
});

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;

try {
  await migrateLab(pool);
  progress(`filling ${schema}`);
  await fill(pool, { rows, pending: pendingRows }, progress);

  const auditStarted = performance.now();
  await audit(pool, { settleSeconds: 5 });
  const auditMs = performance.now() - auditStarted;
  progress(`audit() from scratch: ${ms(auditMs)}`);

  const engine = new StatsEngine({
    pool,
    log: silentLogger,
    intervalMs: 400,
    settleSeconds: 5,
    chaosEnabled: true,
  });
  const baselineStarted = performance.now();
  await engine.start();
  const baselineMs = performance.now() - baselineStarted;
  progress(`engine start (derive from scratch + first tick): ${ms(baselineMs)}`);

  type Sample = { at: number; tickMs: number; parts: Record<string, number> };
  let samples: Sample[] = [];
  engine.subscribe((m: StatsMessage) =>
    samples.push({ at: Date.now(), tickMs: m.tickMs, parts: engine.lastTickParts }),
  );
  const phase = async (label: string) => {
    samples = [];
    await new Promise((r) => setTimeout(r, phaseSeconds * 1000));
    const taken = samples;
    const ticks = taken.map((s) => s.tickMs);
    const span = ((taken[taken.length - 1]?.at ?? 0) - (taken[0]?.at ?? 0)) / 1000;
    const partNames = Object.keys(taken[0]?.parts ?? {});
    return {
      label,
      ticks: taken.length,
      perSecond: span > 0 ? (taken.length - 1) / span : 0,
      p50: quantile(ticks, 0.5),
      p95: quantile(ticks, 0.95),
      max: Math.max(...ticks),
      parts: Object.fromEntries(
        partNames.map((n) => [
          n,
          quantile(
            taken.map((s) => s.parts[n] ?? 0),
            0.5,
          ),
        ]),
      ),
    };
  };

  progress(`idle phase (${phaseSeconds} s)`);
  const idle = await phase('idle');
  progress(`live phase: ${rate} orders/s (${phaseSeconds} s)`);
  const load = startLoad(pool, rate);
  const live = await phase(`${rate} orders/s`);
  await load.stop();
  // Agreement with the auditor once the last orders are of age.
  await new Promise((r) => setTimeout(r, 6_500));
  const last = await engine.tick();
  const report = await audit(pool, { settleSeconds: 5 });
  const { rows: sentRows } = await pool.query<{ sent: number }>(
    'SELECT count(*)::int AS sent FROM outbox WHERE sent_at IS NOT NULL',
  );
  const sent = sentRows[0]?.sent ?? -1;
  await engine.stop();
  const agree =
    last.totals.orders === report.orders &&
    last.invariants.ordersWithoutEvents === report.ordersWithoutEvents &&
    last.invariants.duplicatesDelivered === report.duplicatesDelivered &&
    last.invariants.doubleProcessed === report.doubleProcessed &&
    last.outbox.pending === report.pending &&
    last.totals.published === sent;

  const { rows: sizes } = await pool.query<{ rel: string; size: string }>(
    `SELECT relname AS rel, pg_size_pretty(pg_total_relation_size(c.oid)) AS size
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND relname IN ('outbox', 'orders', 'consumer_deliveries', 'reservations', 'inbox')
      ORDER BY relname`,
    [schema],
  );

  console.log(
    `\nstats tick cost — ${new Date().toISOString()}, ${cpus().length} cores, load average ${loadavg()[0]?.toFixed(1)} (machine shared with other test runs), PostgreSQL in dev-stack`,
  );
  console.log(
    `data: ${rows.toLocaleString('en')} sent outbox rows (+ orders, deliveries, inbox, reservations) + ${pendingRows.toLocaleString('en')} pending`,
  );
  console.log(`sizes: ${sizes.map((s) => `${s.rel} ${s.size}`).join(', ')}`);
  console.log(`audit() from scratch (full scans):         ${ms(auditMs)}`);
  console.log(`engine start (derive from scratch):        ${ms(baselineMs)}`);
  console.log('\nphase          ticks  ticks/s  p50       p95       max');
  for (const p of [idle, live]) {
    console.log(
      `${p.label.padEnd(14)} ${String(p.ticks).padStart(5)}  ${p.perSecond.toFixed(2).padStart(7)}  ${ms(p.p50).padEnd(9)} ${ms(p.p95).padEnd(9)} ${ms(p.max)}`,
    );
  }
  console.log('\nmedian per part (they run in parallel), idle / live:');
  for (const name of Object.keys(idle.parts)) {
    console.log(
      `  ${name.padEnd(14)} ${ms(idle.parts[name] ?? 0).padEnd(9)} / ${ms(live.parts[name] ?? 0)}`,
    );
  }
  console.log(
    `\nstream vs audit() after the live phase: ${agree ? 'agree' : 'DIFFER'} (orders ${last.totals.orders} / ${report.orders}, pending ${last.outbox.pending} / ${report.pending}, published ${last.totals.published} / ${sent} sent rows)`,
  );
  if (!agree) process.exitCode = 1;
} finally {
  await pool.end();
  if (!keep) await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  else progress(`kept schema ${schema}`);
  await admin.end();
}
