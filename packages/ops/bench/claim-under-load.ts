/**
 * `npm run bench:vacuum` (in packages/ops): does the relay's claim stay fast while the
 * UPDATE-on-publish leaves a dead tuple per event? Two schemas side by side, the same
 * sustained load each: one with the outbox's per-table autovacuum settings (migration
 * 000001: vacuum at 1% dead instead of 20%), one reset to PostgreSQL's defaults. Each
 * starts with a history of sent rows (the table a week of traffic leaves), then a writer
 * appends at a steady rate while a real relay (real Kafka) drains it tick by tick.
 * Prints, per window: ticks, tick p50/p95, dead tuples, autovacuum runs, pending-index size.
 *
 *   npx tsx bench/claim-under-load.ts [--seconds 60] [--rate 1000] [--history 300000]
 */
import { parseArgs } from 'node:util';
import {
  migrate,
  OutboxRelay,
  OutboxWriter,
  withTransaction,
  type OutboxEvent,
} from '@outbox/core';
import { startStack } from '@outbox/dev-stack';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    rate: { type: 'string', default: '1000' },
    history: { type: 'string', default: '300000' },
    window: { type: 'string', default: '10' },
  },
});
const seconds = Number(values.seconds);
const rate = Number(values.rate);
const history = Number(values.history);
const windowS = Number(values.window);

const stack = await startStack({ log: () => undefined });
const kafka = new Kafka({
  clientId: 'bench-vacuum',
  brokers: stack.kafkaBrokers,
  logLevel: logLevel.NOTHING,
});
const writer = new OutboxWriter();

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function run(variant: 'tuned' | 'defaults'): Promise<void> {
  const schema = `bench_vacuum_${variant}`;
  const admin = new pg.Client({ connectionString: stack.databaseUrl });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const pool = new pg.Pool({
    connectionString: stack.databaseUrl,
    options: `-c search_path=${schema}`,
    max: 6,
  });
  await migrate(pool);
  if (variant === 'defaults') {
    await pool.query(
      'ALTER TABLE outbox RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold, autovacuum_analyze_scale_factor, fillfactor)',
    );
  }
  // A week of history: sent rows, as the relay leaves them.
  await pool.query(
    `INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, sent_at, topic, created_at)
     SELECT 'order', 'h-' || (g % 5000), 'OrderCreated', jsonb_build_object('seq', g), now(), 'bench', now()
     FROM generate_series(1, $1) g`,
    [history],
  );
  await pool.query('VACUUM ANALYZE outbox');

  const topic = `bench.vacuum.${variant}.${Date.now()}`;
  const kadmin = kafka.admin();
  await kadmin.connect();
  await kadmin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 6 }] });
  await kadmin.disconnect();
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  const relay = new OutboxRelay({ pool, producer, topics: { order: topic }, batchSize: 500 });

  let stop = false;
  let seq = 0;
  // The writer: batches of 10 events per transaction, every 10 ms × (1000 / rate).
  const writing = (async () => {
    const perTick = 10;
    const intervalMs = (perTick / rate) * 1000;
    let next = Date.now();
    while (!stop) {
      const events: OutboxEvent[] = Array.from({ length: perTick }, () => {
        seq += 1;
        return {
          aggregateType: 'order',
          aggregateId: `a-${seq % 2000}`,
          eventType: 'OrderCreated',
          payload: { seq },
        };
      });
      await withTransaction(pool, (c) => writer.appendBatch(c, events));
      next += intervalMs;
      const wait = next - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  })();

  console.log(
    `\n${variant}: ${history.toLocaleString()} sent rows of history, writer at ${rate}/s for ${seconds} s`,
  );
  console.log('  t(s)  ticks  sent  tick p50  tick p95   dead tuples  autovacuums  pending idx');
  const started = Date.now();
  let ticks: number[] = [];
  let sent = 0;
  let windowStart = Date.now();
  while (Date.now() - started < seconds * 1000) {
    const t0 = performance.now();
    const result = await relay.tick();
    ticks.push(performance.now() - t0);
    sent += result.sent;
    if (result.claimed === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    if (Date.now() - windowStart >= windowS * 1000) {
      const { rows } = await pool.query<{ dead: string; vacuums: string; idx: string }>(
        `SELECT n_dead_tup AS dead, autovacuum_count AS vacuums,
                pg_size_pretty(pg_relation_size('outbox_pending_idx')) AS idx
         FROM pg_stat_user_tables WHERE relid = 'outbox'::regclass`,
      );
      const sorted = [...ticks].sort((a, b) => a - b);
      const s = rows[0]!;
      console.log(
        `  ${String(Math.round((Date.now() - started) / 1000)).padStart(4)}  ${String(ticks.length).padStart(5)}  ${String(sent).padStart(5)}  ${percentile(sorted, 50).toFixed(1).padStart(6)} ms  ${percentile(sorted, 95).toFixed(1).padStart(6)} ms  ${String(s.dead).padStart(12)}  ${String(s.vacuums).padStart(11)}  ${s.idx.padStart(11)}`,
      );
      ticks = [];
      sent = 0;
      windowStart = Date.now();
    }
  }
  stop = true;
  await writing;
  await relay.stop();
  await producer.disconnect();
  await pool.end();
  const cleanup = new pg.Client({ connectionString: stack.databaseUrl });
  await cleanup.connect();
  await cleanup.query(`DROP SCHEMA ${schema} CASCADE`);
  await cleanup.end();
}

await run('tuned');
await run('defaults');
