import { claimBatch, markSent } from '@outbox/core';

/** A statement and its parameters, as core's relay/sql.ts returns them. */
interface Query {
  text: string;
  values: unknown[];
}
import type pg from 'pg';
import type { BenchContext, ScenarioResult } from '../env/context.ts';
import { createSchema, settle, type BenchSchema } from '../env/db.ts';
import { fillOutbox } from '../env/tables.ts';
import { markdownTable } from '../report/table.ts';
import { alternate, fmt, ratio, spread, summarize, type Summary } from '../stats.ts';

/**
 * Scenario 10, markSent's cost (issue 13 item 2): `sent_at` is in the predicates of the
 * outbox's partial indexes, so marking a row sent is never a HOT update: each sent row
 * gets a new heap tuple and new entries in every index whose predicate it passes (the
 * primary key and the aggregate index). The claim + mark loop of the relay, database
 * side only (as ceilings' db), with three ways to record that a row was published:
 *   update     — core's markSent, today: sent_at, topic, and the partition and offset
 *                Kafka acknowledged (migration 000009);
 *   topic-only — the same UPDATE without partition and offset, as before 000009: what
 *                recording where each event went costs on the hot path;
 *   queue      — the pending set in a table of its own, outbox_queue (id), which the
 *                claim reads and the mark deletes from; no index of the outbox mentions
 *                sent_at (the blocking index is predicated on attempts only), so the
 *                UPDATE of sent_at is HOT-eligible. Any pending index must change when
 *                a row stops being pending, so this is what an index design can gain
 *                on the mark at most. The table gets fillfactor 45, so that every row's
 *                new version fits on its page. (The writer would pay one more INSERT
 *                per event and twice the table's pages: not measured here.)
 *   delete     — the published rows deleted from the outbox and inserted into a history
 *                table (with its own primary key and aggregate index, which the order
 *                journey and replay would need), one statement.
 * Per variant: events/s of the loop, ms per batch of the claim and of the mark, WAL
 * bytes per event, and the share of HOT updates PostgreSQL reports.
 */
const VARIANTS = ['update', 'topic-only', 'queue', 'delete'] as const;
type MarkVariant = (typeof VARIANTS)[number];
const LABELS: Record<MarkVariant, string> = {
  update: 'UPDATE sent_at, topic, partition, offset (core’s markSent, today)',
  'topic-only': 'UPDATE sent_at, topic (before migration 000009)',
  queue: 'pending rows in outbox_queue; DELETE there + UPDATE sent_at (HOT-eligible)',
  delete: 'DELETE from the outbox + INSERT into a history table',
};
const BATCH = 500;

interface RunSample {
  rate: number;
  claimMs: number;
  markMs: number;
  walBytesPerEvent: number;
  hotShare: number;
}

export interface MarkSentResult {
  events: number;
  batchSize: number;
  runs: Record<MarkVariant, Record<keyof RunSample, Summary>>;
}

/** The outbox of `queue`: the pending set in outbox_queue, no index on sent_at. */
async function withQueue(pool: pg.Pool): Promise<void> {
  await pool.query(`
    CREATE TABLE outbox_queue (id bigint PRIMARY KEY);
    -- Room on each page for the new version of every row (a HOT update stays on its
    -- page): at the outbox's fillfactor 90 only ~13% of the marks were HOT here.
    ALTER TABLE outbox SET (fillfactor = 45);
    DROP INDEX outbox_pending_idx, outbox_pending_shard_idx, outbox_blocking_idx;
    CREATE INDEX outbox_blocking_idx ON outbox (aggregate_type, aggregate_id, id) WHERE attempts > 0`);
}

const CLAIM_COLUMNS = `o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.event_version,
  o.payload::text AS payload, o.headers, o.created_at, o.attempts`;

/** core's claim over outbox_queue: the same conditions, the queue's rows locked. */
function queueClaim(limit: number): Query {
  return {
    text: `SELECT ${CLAIM_COLUMNS} FROM outbox_queue q JOIN outbox o ON o.id = q.id
            WHERE o.next_attempt_at <= now() AND o.dead_lettered_at IS NULL
              AND NOT EXISTS (
                SELECT 1 FROM outbox b JOIN outbox_queue bq ON bq.id = b.id
                 WHERE b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
                   AND b.id < o.id AND b.attempts > 0)
            ORDER BY q.id LIMIT $1 FOR UPDATE OF q SKIP LOCKED`,
    values: [limit],
  };
}

/** Where Kafka wrote each row of a batch, as a relay would record it. */
interface Positions {
  partitions: number[];
  offsets: string[];
}

/** The rows leave the queue; sent_at and topic are written in place (HOT-eligible). */
function queueMark(ids: string[], topics: string[], at: Positions): Query {
  const q = markSent(ids, topics, at.partitions, at.offsets);
  return {
    text: `WITH dequeued AS (DELETE FROM outbox_queue WHERE id = ANY($1::bigint[])) ${q.text}`,
    values: q.values,
  };
}

/** The history table of `delete`: what a sent row keeps, with the journey's index. */
async function withHistory(pool: pg.Pool): Promise<void> {
  await pool.query(`
    CREATE TABLE outbox_sent (LIKE outbox INCLUDING DEFAULTS);
    ALTER TABLE outbox_sent ADD PRIMARY KEY (id);
    CREATE INDEX outbox_sent_aggregate_idx ON outbox_sent (aggregate_type, aggregate_id)`);
}

function deleteMark(ids: string[], topics: string[], at: Positions): Query {
  return {
    text: `WITH moved AS (
             DELETE FROM outbox o
              USING unnest($1::bigint[], $2::text[], $3::int[], $4::bigint[]) AS t(id, topic, p, o)
              WHERE o.id = t.id RETURNING o.*, t.topic AS sent_topic, t.p AS sent_p, t.o AS sent_o)
           INSERT INTO outbox_sent (id, aggregate_type, aggregate_id, event_type, event_version,
                                    payload, headers, created_at, sent_at, attempts, error,
                                    next_attempt_at, dead_lettered_at, topic,
                                    kafka_partition, kafka_offset)
           SELECT id, aggregate_type, aggregate_id, event_type, event_version, payload, headers,
                  created_at, statement_timestamp(), attempts, NULL, next_attempt_at,
                  dead_lettered_at, sent_topic, sent_p, sent_o
             FROM moved`,
    values: [ids, topics, at.partitions, at.offsets],
  };
}

export async function benchMarkSent(ctx: BenchContext): Promise<ScenarioResult> {
  const events = ctx.quick ? 5_000 : 50_000;
  const samples = Object.fromEntries(VARIANTS.map((v) => [v, [] as RunSample[]])) as Record<
    MarkVariant,
    RunSample[]
  >;
  await alternate(ctx.rounds, VARIANTS, async (variant, round) => {
    const schema = await createSchema(ctx.databaseUrl, `bench_marksent_${variant}`);
    try {
      if (variant === 'queue') await withQueue(schema.pool);
      if (variant === 'delete') await withHistory(schema.pool);
      await fillOutbox(schema.pool, 'ours', events);
      if (variant === 'queue')
        await schema.pool.query('INSERT INTO outbox_queue SELECT id FROM outbox');
      await settle(schema.pool, false, 'outbox', ...(variant === 'queue' ? ['outbox_queue'] : []));
      const sample = await claimAndMark(schema, variant, events);
      samples[variant].push(sample);
      ctx.progress(
        `marksent round ${round}/${ctx.rounds} ${variant}: ${fmt(sample.rate)} events/s, ` +
          `claim ${fmt(sample.claimMs, 1)} ms + mark ${fmt(sample.markMs, 1)} ms per batch, ` +
          `HOT ${fmt(sample.hotShare * 100, 0)}%`,
      );
    } finally {
      await schema.drop();
    }
  });
  const keys: (keyof RunSample)[] = ['rate', 'claimMs', 'markMs', 'walBytesPerEvent', 'hotShare'];
  const runs = Object.fromEntries(
    VARIANTS.map((v) => [
      v,
      Object.fromEntries(keys.map((k) => [k, summarize(samples[v].map((s) => s[k]))])),
    ]),
  ) as MarkSentResult['runs'];
  const today = runs.update;
  const table = markdownTable(
    [
      'how a published row is recorded',
      'claim + mark, events/s',
      'vs today',
      'claim ms/batch',
      'mark ms/batch',
      'WAL B/event',
      'HOT updates',
    ],
    VARIANTS.map((v) => [
      LABELS[v],
      spread(runs[v].rate),
      ratio(runs[v].rate.median, today.rate.median),
      fmt(runs[v].claimMs.median, 1),
      fmt(runs[v].markMs.median, 1),
      fmt(runs[v].walBytesPerEvent.median),
      v === 'delete' ? '–' : `${fmt(runs[v].hotShare.median * 100, 0)}%`,
    ]),
  );
  const data: MarkSentResult = { events, batchSize: BATCH, runs };
  return {
    title: 'markSent: the non-HOT update and its alternatives (database side)',
    table: `${table}\n\n${fmt(events)} events per run, ${BATCH} per batch, a fresh schema each run.`,
    data,
  };
}

/** Claims and marks every row, BATCH at a time on one connection, timing each phase. */
async function claimAndMark(
  schema: BenchSchema,
  variant: MarkVariant,
  events: number,
): Promise<RunSample> {
  const client = await schema.pool.connect();
  try {
    const wal = async () =>
      BigInt(
        (await client.query<{ lsn: string }>(`SELECT pg_current_wal_lsn() - '0/0' AS lsn`)).rows[0]!
          .lsn,
      );
    const walBefore = await wal();
    let claimMs = 0;
    let markMs = 0;
    let batches = 0;
    let done = 0;
    const started = performance.now();
    for (;;) {
      await client.query('BEGIN');
      const t0 = performance.now();
      const { rows } = await client.query<{ id: string }>(
        variant === 'queue' ? queueClaim(BATCH) : claimBatch(BATCH),
      );
      const t1 = performance.now();
      if (rows.length === 0) {
        await client.query('COMMIT');
        break;
      }
      const ids = rows.map((r) => r.id);
      const topics = rows.map(() => 'orders.events');
      // 6 partitions, offsets counting up per partition, as the relay's would.
      const at: Positions = {
        partitions: ids.map((id) => Number(id) % 6),
        offsets: ids.map((id) => String(Math.floor(Number(id) / 6))),
      };
      await client.query(
        variant === 'delete'
          ? deleteMark(ids, topics, at)
          : variant === 'queue'
            ? queueMark(ids, topics, at)
            : variant === 'topic-only'
              ? markSent(ids, topics)
              : markSent(ids, topics, at.partitions, at.offsets),
      );
      markMs += performance.now() - t1;
      claimMs += t1 - t0;
      await client.query('COMMIT');
      batches += 1;
      done += rows.length;
    }
    const seconds = (performance.now() - started) / 1000;
    if (done !== events) throw new Error(`${variant}: marked ${done} rows, expected ${events}`);
    const walBytes = Number((await wal()) - walBefore);
    // The statistics collector is flushed at transaction end, within a second or so.
    await new Promise((r) => setTimeout(r, 1_100));
    const { rows: stats } = await client.query<{ upd: string; hot: string }>(
      `SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables
        WHERE schemaname = current_schema() AND relname = 'outbox'`,
    );
    const upd = Number(stats[0]?.upd ?? 0);
    return {
      rate: done / seconds,
      claimMs: claimMs / batches,
      markMs: markMs / batches,
      walBytesPerEvent: walBytes / done,
      hotShare: upd > 0 ? Number(stats[0]?.hot ?? 0) / upd : 0,
    };
  } finally {
    client.release();
  }
}
