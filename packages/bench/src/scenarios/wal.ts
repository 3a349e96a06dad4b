import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { restartPostgres, type WalLevel } from '@outbox/dev-stack';
import type { BenchContext, ScenarioResult } from '../env/context.ts';
import { createSchema } from '../env/db.ts';
import {
  ensurePgbench,
  ORDER_OUTBOX_DELETE_SCRIPT,
  ORDER_OUTBOX_SCRIPT,
  runPgbench,
} from '../env/pgbench.ts';
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
 *
 * The third run answers issue 12's cleanup question for CDC from the writer's side:
 * Debezium's delete-after-insert (the row deleted in the transaction that wrote it, so
 * the table stays empty and no cleanup job runs) against inserting only (the row is
 * confirmed and deleted later by retention: what that costs per row is the cleanup
 * scenario's bounded DELETE, and the confirmer's UPDATE per published row).
 */
interface Run {
  key: 'replica' | 'logical' | 'logical-delete';
  label: string;
  level: WalLevel;
  script: string;
}

const RUNS: Run[] = [
  { key: 'logical', label: 'logical, insert', level: 'logical', script: ORDER_OUTBOX_SCRIPT },
  {
    key: 'logical-delete',
    label: 'logical, insert + delete in the same transaction (Debezium’s delete-after-insert)',
    level: 'logical',
    script: ORDER_OUTBOX_DELETE_SCRIPT,
  },
  { key: 'replica', label: 'replica, insert', level: 'replica', script: ORDER_OUTBOX_SCRIPT },
];

interface Sample {
  run: Run['key'];
  level: WalLevel;
  round: number;
  txPerSecond: number;
  walBytesPerTx: number;
  /** Rows left in the outbox after the run (0 for delete-after-insert). */
  outboxRows: number;
}

export async function benchWal(ctx: BenchContext): Promise<ScenarioResult> {
  ensurePgbench(ctx.progress);
  const seconds = ctx.quick ? 2 : 10;
  const clients = 8;
  const dir = mkdtempSync(join(tmpdir(), 'outbox-bench-wal-'));
  const scripts = new Map<Run['key'], string>();
  for (const run of RUNS) {
    const file = join(dir, `${run.key}.sql`);
    writeFileSync(file, run.script);
    scripts.set(run.key, file);
  }
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
      // The order rotates each round, so no run always follows a restart of one kind.
      const order = RUNS.map((_, i) => RUNS[(i + round - 1) % RUNS.length]!);
      for (const run of order) {
        const url = await restartPostgres({
          mode: 'fast',
          walLevel: run.level,
          log: () => undefined,
        });
        await assertWalLevel(url, run.level);
        await query(url, `TRUNCATE ${schema.name}.outbox, ${schema.name}.bench_orders`);
        const lsn0 = await walLsn(url);
        const { tps, transactions } = runPgbench(
          url,
          schema.name,
          scripts.get(run.key)!,
          seconds,
          clients,
        );
        const walBytes = await walBytesSince(url, lsn0);
        const { n } = await query<{ n: number }>(
          url,
          `SELECT count(*)::int AS n FROM ${schema.name}.outbox`,
        );
        if (run.key === 'logical-delete' && n !== 0)
          throw new Error(`delete-after-insert left ${n} rows in the outbox`);
        const sample: Sample = {
          run: run.key,
          level: run.level,
          round,
          txPerSecond: tps,
          walBytesPerTx: walBytes / transactions,
          outboxRows: n,
        };
        samples.push(sample);
        ctx.progress(
          `wal round ${round}/${ctx.rounds} ${run.key}: ${fmt(tps)} tx/s, ${fmt(sample.walBytesPerTx)} B of WAL per tx, ${fmt(n)} rows left in the outbox`,
        );
      }
    }
  } finally {
    // Back to what the stack runs with (Debezium needs logical).
    await restartPostgres({ mode: 'fast', log: () => undefined });
    await schema.drop();
  }
  const by = (key: Run['key']) => samples.filter((s) => s.run === key);
  const tps = (key: Run['key']) => summarize(by(key).map((s) => s.txPerSecond));
  const wal = (key: Run['key']) => summarize(by(key).map((s) => s.walBytesPerTx));
  const replica = tps('replica').median;
  const replicaWal = wal('replica').median;
  const table = markdownTable(
    ['wal_level, writer', 'tx/s median (min–max)', 'vs replica', 'WAL bytes per tx', 'vs replica'],
    RUNS.map((run) => [
      run.label,
      spread(tps(run.key)),
      `${fmt((tps(run.key).median / replica) * 100, 1)}%`,
      fmt(wal(run.key).median),
      `${fmt((wal(run.key).median / replicaWal) * 100, 1)}%`,
    ]),
  );
  return {
    title: 'What wal_level = logical costs the writers (order + outbox transaction, pgbench)',
    table: `${table}\n\n${clients} pgbench clients, ${seconds} s per run, tables emptied and the server restarted (fast) before each run with the level under test; the runs rotate, ${ctx.rounds} rounds.`,
    data: { seconds, clients, samples },
    chartTitle: 'wal_level = logical: tx/s as a share of replica',
    chart: [
      { label: 'logical / replica tx/s', value: tps('logical').median / replica, target: 0.9 },
      {
        label: 'delete-after-insert / replica tx/s',
        value: tps('logical-delete').median / replica,
      },
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
