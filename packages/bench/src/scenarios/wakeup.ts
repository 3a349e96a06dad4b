import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrateLab } from '@outbox/lab';
import type { BenchContext, ScenarioResult } from '../env/context.ts';
import { ensurePgbench, ORDER_OUTBOX_SCRIPT, runPgbench } from '../env/pgbench.ts';
import { fmt, summarize, type Summary } from '../stats.ts';

/**
 * Writer cost of the relay's wake-up (issue scenario 4): order + outbox transactions
 * per second, measured with pgbench, for three schemas side by side:
 *   none — the outbox without any trigger (the relay polls);
 *   seed — the seed's per-row `pg_notify('outbox_new', NEW.id::text)` trigger;
 *   ours — our trigger while the relay is busy (it notifies only while a relay sleeps);
 *   ours-idle — our trigger with a relay asleep: one notification per transaction, the
 *               cost writers pay only when the relay has nothing to do.
 * A LISTEN connection is open on every channel during the runs, as the relay's is.
 */
export interface WakeupResult {
  variant: (typeof VARIANTS)[number];
  txPerSecond: Summary;
}

const VARIANTS = ['none', 'seed', 'ours', 'ours-idle'] as const;

async function prepare(databaseUrl: string, variant: (typeof VARIANTS)[number]): Promise<string> {
  const schema = `bench_wakeup_${variant.replace('-', '_')}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: databaseUrl, options: `-c search_path=${schema}` });
  await migrateLab(pool);
  await pool.query(
    'CREATE TABLE bench_orders (id BIGSERIAL PRIMARY KEY, user_id INT NOT NULL, sku TEXT NOT NULL, quantity INT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())',
  );
  if (!variant.startsWith('ours')) await pool.query('DROP TRIGGER outbox_notify_trigger ON outbox');
  if (variant === 'ours-idle') {
    // A relay asleep; its heartbeat is kept fresh below while pgbench runs.
    await pool.query(
      "INSERT INTO outbox_relay_members (replica_id, sleeping) VALUES ('bench-idle', true)",
    );
  }
  if (variant === 'seed') {
    await pool.query(`CREATE FUNCTION seed_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_notify('outbox_new', NEW.id::text); RETURN NEW; END; $$`);
    await pool.query(
      'CREATE TRIGGER seed_outbox_notify_trigger AFTER INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION seed_outbox_notify()',
    );
  }
  await pool.end();
  return schema;
}

/** Runs the three variants alternately, `rounds` times each. */
export async function benchWakeup(
  databaseUrl: string,
  { rounds = 3, seconds = 8, clients = 8, progress = (_: string) => undefined as void } = {},
): Promise<WakeupResult[]> {
  ensurePgbench(progress);
  const dir = mkdtempSync(join(tmpdir(), 'outbox-bench-'));
  const scriptFile = join(dir, 'order-outbox.sql');
  writeFileSync(scriptFile, ORDER_OUTBOX_SCRIPT);
  const schemas = Object.fromEntries(
    await Promise.all(VARIANTS.map(async (v) => [v, await prepare(databaseUrl, v)] as const)),
  ) as Record<(typeof VARIANTS)[number], string>;

  const listener = new pg.Client({ connectionString: databaseUrl });
  await listener.connect();
  await listener.query('LISTEN outbox_new');
  await listener.query(`LISTEN "outbox_pending.${schemas.ours}"`);
  await listener.query(`LISTEN "outbox_pending.${schemas['ours-idle']}"`);
  const heartbeat = setInterval(() => {
    void listener
      .query(`UPDATE ${schemas['ours-idle']}.outbox_relay_members SET heartbeat_at = now()`)
      .catch(() => undefined);
  }, 5_000);
  listener.on('notification', () => undefined);

  const samples: Record<string, number[]> = Object.fromEntries(VARIANTS.map((v) => [v, []]));
  try {
    for (let round = 1; round <= rounds; round += 1) {
      for (const variant of VARIANTS) {
        const { tps } = runPgbench(databaseUrl, schemas[variant], scriptFile, seconds, clients);
        samples[variant]!.push(tps);
        progress(`wake-up round ${round}/${rounds} ${variant}: ${fmt(tps)} tx/s`);
      }
    }
  } finally {
    clearInterval(heartbeat);
    await listener.end();
  }
  return VARIANTS.map((variant) => ({ variant, txPerSecond: summarize(samples[variant]!) }));
}

export function wakeupTable(results: WakeupResult[]): string {
  const none = results.find((r) => r.variant === 'none')!.txPerSecond.median;
  const lines = [
    '| wake-up | tx/s (median) | spread | ratio to none (target ours ≥ 90%) |',
    '|---|---|---|---|',
  ];
  for (const r of results) {
    const s = r.txPerSecond;
    lines.push(
      `| ${r.variant} | ${fmt(s.median)} | ${fmt(s.min)}–${fmt(s.max)} | ${fmt((s.median / none) * 100, 1)}% |`,
    );
  }
  return lines.join('\n');
}

/** Scenario 4 for the runner: the table, the raw samples, the ratio bars. */
export async function benchWakeupScenario(ctx: BenchContext): Promise<ScenarioResult> {
  const results = await benchWakeup(
    ctx.databaseUrl,
    ctx.quick
      ? { rounds: 1, seconds: 2, progress: ctx.progress }
      : { rounds: ctx.rounds, seconds: 6, progress: ctx.progress },
  );
  const none = results.find((r) => r.variant === 'none')!.txPerSecond.median;
  await dropWakeupSchemas(ctx.databaseUrl);
  return {
    title: 'Writer cost of the wake-up (order + outbox tx/s, pgbench, 8 clients)',
    table: wakeupTable(results),
    data: results,
    chartTitle: 'wake-up: writer tx/s, ratio to none (target ours ≥ 90%)',
    chart: results.map((r) => ({
      label: r.variant,
      value: r.txPerSecond.median / none,
      ...(r.variant.startsWith('ours') ? { target: 0.9 } : {}),
    })),
  };
}

async function dropWakeupSchemas(databaseUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  for (const v of VARIANTS) {
    await admin.query(`DROP SCHEMA IF EXISTS bench_wakeup_${v.replace('-', '_')} CASCADE`);
  }
  await admin.end();
}
