import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { restartPostgres, type WalLevel } from '@outbox/dev-stack';
import type { BenchContext, ScenarioResult } from '../env/context.ts';
import { createSchema } from '../env/db.ts';
import { ensurePgbench, ORDER_OUTBOX_SCRIPT, runPgbench } from '../env/pgbench.ts';
import { markdownTable } from '../report/table.ts';
import { fmt, spread, summarize } from '../stats.ts';

/**
 * What Debezium's prerequisite costs the writers: `wal_level = logical` against
 * `replica`, on the same server restarted between runs (a command-line flag of the
 * dev-stack; ALTER SYSTEM cannot override it), alternating, repeated. The load is
 * the order + outbox transaction of the wake-up scenario, through pgbench; besides
 * tx/s, the WAL written per transaction (pg_current_wal_lsn before and after), which
 * is the quieter of the two figures. No slot is read during the runs: what decoding
 * costs a busy server is Connect's CPU, in the latency scenario.
 */
const LEVELS: WalLevel[] = ['logical', 'replica'];

interface Sample {
  level: WalLevel;
  round: number;
  txPerSecond: number;
  walBytesPerTx: number;
}

export async function benchWal(ctx: BenchContext): Promise<ScenarioResult> {
  ensurePgbench(ctx.progress);
  const seconds = ctx.quick ? 2 : 10;
  const clients = 8;
  const script = join(mkdtempSync(join(tmpdir(), 'outbox-bench-wal-')), 'order-outbox.sql');
  writeFileSync(script, ORDER_OUTBOX_SCRIPT);
  const slots = await logicalSlots(ctx.databaseUrl);
  if (slots.length > 0)
    throw new Error(
      `wal_level = replica cannot start while logical slots exist (${slots.join(', ')}): drop them (npm run stack -- down) and run again`,
    );
  const schema = await createSchema(ctx.databaseUrl, 'bench_wal');
  const samples: Sample[] = [];
  try {
    await schema.pool.query(
      'CREATE TABLE bench_orders (id BIGSERIAL PRIMARY KEY, user_id INT NOT NULL, sku TEXT NOT NULL, quantity INT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())',
    );
    for (let round = 1; round <= ctx.rounds; round += 1) {
      for (const level of round % 2 === 1 ? LEVELS : [...LEVELS].reverse()) {
        const url = await restartPostgres({ mode: 'fast', walLevel: level, log: () => undefined });
        await assertWalLevel(url, level);
        const lsn0 = await walLsn(url);
        const { tps, transactions } = runPgbench(url, schema.name, script, seconds, clients);
        const walBytes = await walBytesSince(url, lsn0);
        const sample = { level, round, txPerSecond: tps, walBytesPerTx: walBytes / transactions };
        samples.push(sample);
        ctx.progress(
          `wal round ${round}/${ctx.rounds} ${level}: ${fmt(tps)} tx/s, ${fmt(sample.walBytesPerTx)} B of WAL per tx`,
        );
      }
    }
  } finally {
    // Back to what the stack runs with (Debezium needs logical).
    await restartPostgres({ mode: 'fast', log: () => undefined });
    await schema.drop();
  }
  const by = (level: WalLevel) => samples.filter((s) => s.level === level);
  const tps = (level: WalLevel) => summarize(by(level).map((s) => s.txPerSecond));
  const wal = (level: WalLevel) => summarize(by(level).map((s) => s.walBytesPerTx));
  const replica = tps('replica').median;
  const replicaWal = wal('replica').median;
  const table = markdownTable(
    ['wal_level', 'tx/s median (min–max)', 'vs replica', 'WAL bytes per tx', 'vs replica'],
    LEVELS.map((level) => [
      level,
      spread(tps(level)),
      `${fmt((tps(level).median / replica) * 100, 1)}%`,
      fmt(wal(level).median),
      `${fmt((wal(level).median / replicaWal) * 100, 1)}%`,
    ]),
  );
  return {
    title: 'What wal_level = logical costs the writers (order + outbox transaction, pgbench)',
    table: `${table}\n\n${clients} pgbench clients, ${seconds} s per run, the server restarted (fast) before each run with the level under test; the levels alternate, ${ctx.rounds} rounds.`,
    data: { seconds, clients, samples },
    chartTitle: 'wal_level = logical: tx/s as a share of replica',
    chart: [
      { label: 'logical / replica tx/s', value: tps('logical').median / replica, target: 0.9 },
    ],
  };
}

async function query<T>(url: string, text: string, values: unknown[] = []): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows[0] as T;
  } finally {
    await client.end();
  }
}

async function logicalSlots(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ slot_name: string }>(
      "SELECT slot_name FROM pg_replication_slots WHERE slot_type = 'logical'",
    );
    return rows.map((r) => r.slot_name);
  } finally {
    await client.end();
  }
}

async function assertWalLevel(url: string, level: WalLevel): Promise<void> {
  const { wal_level } = await query<{ wal_level: string }>(url, 'SHOW wal_level');
  if (wal_level !== level) throw new Error(`the server runs wal_level ${wal_level}, not ${level}`);
}

const walLsn = async (url: string) =>
  (await query<{ lsn: string }>(url, 'SELECT pg_current_wal_lsn()::text AS lsn')).lsn;

const walBytesSince = async (url: string, lsn: string) =>
  Number(
    (
      await query<{ n: string }>(
        url,
        'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::text AS n',
        [lsn],
      )
    ).n,
  );
