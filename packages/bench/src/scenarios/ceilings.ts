import { claimBatch, markSent, toMessage, withTransaction, type OutboxRow } from '@outbox/core';
import type { Message } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import type { BenchContext, ScenarioResult } from '../env/context.ts';
import { createSchema, settle } from '../env/db.ts';
import { createTopic, deleteTopics, kafkaClient, relayProducer } from '../env/kafka.ts';
import { fillOutbox } from '../env/tables.ts';
import { markdownTable } from '../report/table.ts';
import { alternate, fmt, spread, summarize, type Summary } from '../stats.ts';

/**
 * Scenario 1, the relay's physical limits on this machine, measured side by side:
 *   db    — claim 500 pending rows (core's claim query, SKIP LOCKED) + one UPDATE
 *           marking them sent (core's markSent), one transaction per batch, no Kafka;
 *   kafka — kafkajs producing the same messages (core's toMessage of the same rows),
 *           acks = all, 500 per request, one request in flight, idempotent: the
 *           relay's producer and the relay's shape, no database;
 *   kafka, 4 in flight — the same messages with 4 requests in flight (not idempotent),
 *           to show what the one-in-flight rule costs.
 */
export interface CeilingsResult {
  events: number;
  batchSize: number;
  avgPayloadBytes: number;
  rates: Record<CeilingVariant, Summary>;
}

const VARIANTS = ['db', 'kafka', 'kafka-4-in-flight'] as const;
type CeilingVariant = (typeof VARIANTS)[number];
const LABELS: Record<CeilingVariant, string> = {
  db: 'DB only: claim 500 + mark sent (no Kafka)',
  kafka: 'Kafka only: 500/request, 1 in flight, idempotent (no DB)',
  'kafka-4-in-flight': 'Kafka only: 500/request, 4 in flight (no DB)',
};
const BATCH = 500;

export async function benchCeilings(ctx: BenchContext): Promise<ScenarioResult> {
  const events = ctx.quick ? 10_000 : 50_000;
  const schema = await createSchema(ctx.databaseUrl, 'bench_ceilings');
  const prefix = 'bench.ceilings.';
  const kafka = kafkaClient(ctx.kafkaBrokers, 'bench-ceilings');
  const topic = `${prefix}orders.events`;
  await createTopic(kafka, topic);
  const producer = relayProducer(kafka);
  const pipelined = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
    maxInFlightRequests: 4,
  });
  await Promise.all([producer.connect(), pipelined.connect()]);
  const samples: Record<CeilingVariant, number[]> = { db: [], kafka: [], 'kafka-4-in-flight': [] };
  let avgBytes = 0;
  try {
    // The messages of the Kafka runs: exactly what the relay would produce for these rows.
    await fillOutbox(schema.pool, 'ours', events);
    const { rows } = await schema.pool.query<OutboxRow>(
      `SELECT id, aggregate_type, aggregate_id, event_type, event_version, payload::text AS payload,
              headers, created_at, attempts FROM outbox ORDER BY id`,
    );
    const messages = rows.map((r) => toMessage(r));
    avgBytes = messages.reduce((n, m) => n + Buffer.byteLength(String(m.value)), 0) / events;
    ctx.progress(`ceilings: ${fmt(events)} events, payload ${fmt(avgBytes)} B on average`);
    const warm = messages.slice(0, 10);
    await producer.send({ topic, acks: -1, messages: warm });
    await pipelined.send({ topic, acks: -1, messages: warm });

    await alternate(ctx.rounds, VARIANTS, async (variant, round) => {
      let rate: number;
      if (variant === 'db') {
        await schema.pool.query('UPDATE outbox SET sent_at = NULL, topic = NULL');
        await settle(schema.pool, ctx.quick, 'outbox');
        rate = await claimAndMark(schema.pool, events);
      } else {
        rate = await produceAll(
          variant === 'kafka' ? producer : pipelined,
          topic,
          messages,
          variant === 'kafka' ? 1 : 4,
        );
      }
      samples[variant].push(rate);
      ctx.progress(`ceilings round ${round}/${ctx.rounds} ${variant}: ${fmt(rate)} events/s`);
    });
  } finally {
    await Promise.all([producer.disconnect(), pipelined.disconnect()]);
    await deleteTopics(kafka, prefix).catch(() => undefined);
    await schema.drop();
  }
  const rates = Object.fromEntries(VARIANTS.map((v) => [v, summarize(samples[v])])) as Record<
    CeilingVariant,
    Summary
  >;
  const lower = Math.min(rates.db.median, rates.kafka.median);
  const table = markdownTable(
    ['ceiling', 'events/s median (min–max)', 'ratio to the lower ceiling'],
    VARIANTS.map((v) => [
      LABELS[v],
      spread(rates[v]),
      `${fmt((rates[v].median / lower) * 100, 0)}%`,
    ]),
  );
  const data: CeilingsResult = { events, batchSize: BATCH, avgPayloadBytes: avgBytes, rates };
  return {
    title: 'Ceilings: the relay’s physical limits (events/s)',
    table: `${table}\n\n${fmt(events)} events per run, payloads ${fmt(avgBytes)} B on average.`,
    data,
  };
}

/** Claims and marks every pending row, BATCH at a time, on one connection. */
async function claimAndMark(pool: import('pg').Pool, events: number): Promise<number> {
  const started = performance.now();
  let done = 0;
  for (;;) {
    const n = await withTransaction(pool, async (client) => {
      const { rows } = await client.query<OutboxRow>(claimBatch(BATCH));
      if (rows.length === 0) return 0;
      await client.query(
        markSent(
          rows.map((r) => r.id),
          rows.map(() => 'orders.events'),
        ),
      );
      return rows.length;
    });
    if (n === 0) break;
    done += n;
  }
  if (done !== events) throw new Error(`claimed ${done} rows, expected ${events}`);
  return done / ((performance.now() - started) / 1000);
}

/** Produces every message, BATCH per request, `inFlight` requests at a time. */
async function produceAll(
  producer: import('kafkajs').Producer,
  topic: string,
  messages: Message[],
  inFlight: number,
): Promise<number> {
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < messages.length) {
      const batch = messages.slice(next, next + BATCH);
      next += BATCH;
      await producer.sendBatch({
        acks: -1,
        timeout: 30_000,
        topicMessages: [{ topic, messages: batch }],
      });
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return messages.length / ((performance.now() - started) / 1000);
}
