import type { BenchContext } from '../env/context.ts';
import { createSchema } from '../env/db.ts';
import { markdownTable } from '../report/table.ts';
import { fmt, ratio, spread, summarize, type Summary } from '../stats.ts';
import { history } from '../env/tables.ts';

/**
 * Scenario 6, cleanup of old sent rows (1M in full mode), both ways the seed names:
 *   delete    — the seed's retention DELETE (sent more than 7 days ago), bounded: 10,000
 *               rows per statement walking the primary key, so no statement holds
 *               locks or bloats WAL for long (the usual way to run it in production);
 *   partition — the same rows in a daily partition of a table partitioned by
 *               created_at, removed by DETACH PARTITION + DROP TABLE.
 * Each round copies the same 1M rows from a template first (timed apart). UNLOGGED
 * like the growth tables, which favours DELETE (its WAL is not written).
 */
export interface CleanupResult {
  rows: number;
  deleteSeconds: Summary;
  dropSeconds: Summary;
  table: string;
}

const DELETE_BATCH = 10_000;

// Our outbox's columns, partitioned by day. The primary key must include the
// partition key: that is what core's table would have to change to use this. The
// parent cannot be UNLOGGED; its partitions are.
const PARTITIONED_DDL = `
CREATE TABLE outbox_daily (
    id              BIGINT      NOT NULL,
    aggregate_type  TEXT        NOT NULL,
    aggregate_id    TEXT        NOT NULL,
    event_type      TEXT        NOT NULL,
    event_version   INT         NOT NULL DEFAULT 1,
    payload         JSONB       NOT NULL,
    headers         JSONB       NOT NULL DEFAULT '{}'::jsonb,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    sent_at         TIMESTAMPTZ,
    attempts        INT         NOT NULL DEFAULT 0,
    error           TEXT,
    next_attempt_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    dead_lettered_at TIMESTAMPTZ,
    topic           TEXT,
    shard           SMALLINT,
    PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
CREATE INDEX outbox_daily_pending_idx ON outbox_daily (id) WHERE sent_at IS NULL AND dead_lettered_at IS NULL;
CREATE INDEX outbox_daily_aggregate_idx ON outbox_daily (aggregate_type, aggregate_id);
CREATE UNLOGGED TABLE outbox_daily_today PARTITION OF outbox_daily
    FOR VALUES FROM (date_trunc('day', now())) TO (date_trunc('day', now()) + interval '1 day');`;

export async function benchCleanup(ctx: BenchContext): Promise<CleanupResult> {
  const rows = ctx.quick ? 50_000 : 1_000_000;
  const schema = await createSchema(ctx.databaseUrl, 'bench_cleanup');
  const pool = schema.pool;
  const deletes: number[] = [];
  const drops: number[] = [];
  try {
    await pool.query('ALTER TABLE outbox SET UNLOGGED');
    await pool.query('ALTER TABLE outbox SET (autovacuum_enabled = false)');
    await pool.query('CREATE UNLOGGED TABLE template (LIKE outbox INCLUDING DEFAULTS)');
    await pool.query('ALTER TABLE template DROP COLUMN shard');
    await history(pool, rows, { pending: false }, ctx, 'template');
    await pool.query(PARTITIONED_DDL);
    const columns =
      'id, aggregate_type, aggregate_id, event_type, event_version, payload, headers, created_at, sent_at, attempts, error, next_attempt_at, dead_lettered_at, topic';
    for (let round = 1; round <= ctx.rounds; round += 1) {
      await pool.query('TRUNCATE outbox');
      await pool.query(`INSERT INTO outbox (${columns}) SELECT ${columns} FROM template`);
      await pool.query('VACUUM ANALYZE outbox');
      let t0 = performance.now();
      const { rows: bounds } = await pool.query<{ lo: string; hi: string }>(
        "SELECT min(id)::text AS lo, max(id)::text AS hi FROM outbox WHERE sent_at < now() - interval '7 days'",
      );
      let deleted = 0;
      for (
        let lo = BigInt(bounds[0]!.lo);
        lo <= BigInt(bounds[0]!.hi);
        lo += BigInt(DELETE_BATCH)
      ) {
        const r = await pool.query(
          `DELETE FROM outbox WHERE id >= $1 AND id < $2 AND sent_at < now() - interval '7 days'`,
          [lo.toString(), (lo + BigInt(DELETE_BATCH)).toString()],
        );
        deleted += r.rowCount ?? 0;
      }
      deletes.push((performance.now() - t0) / 1000);
      if (deleted !== rows)
        throw new Error(`bounded DELETE removed ${deleted} rows, expected ${rows}`);

      await pool.query(
        `CREATE UNLOGGED TABLE outbox_daily_old PARTITION OF outbox_daily
           FOR VALUES FROM (date_trunc('day', now() - interval '8 days')) TO (date_trunc('day', now() - interval '7 days'))`,
      );
      await pool.query(`INSERT INTO outbox_daily (${columns}) SELECT ${columns} FROM template`);
      await pool.query('VACUUM ANALYZE outbox_daily');
      t0 = performance.now();
      await pool.query('ALTER TABLE outbox_daily DETACH PARTITION outbox_daily_old');
      await pool.query('DROP TABLE outbox_daily_old');
      drops.push((performance.now() - t0) / 1000);
      ctx.progress(
        `cleanup round ${round}/${ctx.rounds}: bounded DELETE ${fmt(deletes.at(-1)!, 1)} s, DROP partition ${fmt(drops.at(-1)! * 1000, 1)} ms`,
      );
    }
  } finally {
    await schema.drop();
  }
  const deleteSeconds = summarize(deletes);
  const dropSeconds = summarize(drops);
  const table = markdownTable(
    [
      `cleanup of ${fmt(rows)} rows sent > 7 days ago`,
      'seconds, median (min–max)',
      'ratio to DROP partition',
    ],
    [
      [
        `bounded DELETE (${fmt(DELETE_BATCH)} per statement)`,
        spread(deleteSeconds, 2),
        ratio(deleteSeconds.median, dropSeconds.median),
      ],
      ['DETACH + DROP of the daily partition', spread(dropSeconds, 3), '100%'],
    ],
  );
  return { rows, deleteSeconds, dropSeconds, table };
}
