import { claimBatch, markSent, toMessage, withTransaction, type OutboxRow } from '@outbox/core';
import type { Message } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import type { BenchContext, ScenarioResult } from '../env/context.ts';
import { createSchema, settle } from '../env/db.ts';
import { createTopic, deleteTopics, kafkaClient, relayProducer } from '../env/kafka.ts';
import { unpatchedKafkaJs } from '../env/unpatched-kafkajs.ts';
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
 *           to show what the one-in-flight rule costs;
 *   kafka, unpatched — the kafka run on kafkajs 2.2.4 as published, without
 *           patches/kafkajs@2.2.4.patch (acknowledgements kept per partition): what the
 *           patch that keeps sends from losing moved partitions costs.
 */
export interface CeilingsResult {
  events: number;
  batchSize: number;
  avgPayloadBytes: number;
  rates: Record<CeilingVariant, Summary>;
  /** CPU time of this process per event produced (user + system), per Kafka variant. */
  cpuMicrosPerEvent: Record<Exclude<CeilingVariant, 'db'>, Summary>;
}

const VARIANTS = ['db', 'kafka', 'kafka-unpatched', 'kafka-4-in-flight'] as const;
type CeilingVariant = (typeof VARIANTS)[number];
const LABELS: Record<CeilingVariant, string> = {
  db: 'DB only: claim 500 + mark sent (no Kafka)',
  kafka: 'Kafka only: 500/request, 1 in flight, idempotent (no DB)',
  'kafka-unpatched': 'Kafka only, as kafka but on kafkajs without our patch (no DB)',
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
  // The same client and producer settings on the unpatched copy of kafkajs.
  const unpatched = await unpatchedKafkaJs();
  const unpatchedProducer = relayProducer(
    new unpatched.kafkajs.Kafka({
      clientId: 'bench-ceilings-unpatched',
      brokers: ctx.kafkaBrokers,
      connectionTimeout: 3_000,
      requestTimeout: 30_000,
      logLevel: unpatched.kafkajs.logLevel.ERROR,
    }),
  );
  const pipelined = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
    maxInFlightRequests: 4,
  });
  await Promise.all([producer.connect(), pipelined.connect(), unpatchedProducer.connect()]);
  const samples: Record<CeilingVariant, number[]> = {
    db: [],
    kafka: [],
    'kafka-unpatched': [],
    'kafka-4-in-flight': [],
  };
  const cpu: Record<Exclude<CeilingVariant, 'db'>, number[]> = {
    kafka: [],
    'kafka-unpatched': [],
    'kafka-4-in-flight': [],
  };
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
    await unpatchedProducer.send({ topic, acks: -1, messages: warm });

    await alternate(ctx.rounds, VARIANTS, async (variant, round) => {
      let rate: number;
      if (variant === 'db') {
        // A fresh outbox each round, as a relay meets it: the same table with sent_at
        // reset carried the earlier rounds' dead tuples and index entries, and measured
        // 11,799 ev/s where a fresh schema (bench marksent, same session) gave 27,798.
        const db = await createSchema(ctx.databaseUrl, 'bench_ceilings_db');
        try {
          await fillOutbox(db.pool, 'ours', events);
          await settle(db.pool, ctx.quick, 'outbox');
          rate = await claimAndMark(db.pool, events);
        } finally {
          await db.drop();
        }
      } else {
        const producers = { kafka: producer, 'kafka-unpatched': unpatchedProducer };
        // The client's CPU per event is what the patch can cost; the rate also
        // moves with the broker and whatever else runs on these 2 cores.
        const before = process.cpuUsage();
        rate =
          variant === 'kafka-4-in-flight'
            ? await produceAll(pipelined, topic, messages, 4)
            : await produceAll(producers[variant], topic, messages, 1);
        const used = process.cpuUsage(before);
        cpu[variant].push((used.user + used.system) / events);
      }
      samples[variant].push(rate);
      ctx.progress(`ceilings round ${round}/${ctx.rounds} ${variant}: ${fmt(rate)} events/s`);
    });
  } finally {
    await Promise.all([
      producer.disconnect(),
      pipelined.disconnect(),
      unpatchedProducer.disconnect(),
    ]);
    unpatched.dispose();
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
  const cpuMicrosPerEvent = {
    kafka: summarize(cpu.kafka),
    'kafka-unpatched': summarize(cpu['kafka-unpatched']),
    'kafka-4-in-flight': summarize(cpu['kafka-4-in-flight']),
  };
  const data: CeilingsResult = {
    events,
    batchSize: BATCH,
    avgPayloadBytes: avgBytes,
    rates,
    cpuMicrosPerEvent,
  };
  const patchRatio = rates.kafka.median / rates['kafka-unpatched'].median;
  const cpuRatio = cpuMicrosPerEvent.kafka.median / cpuMicrosPerEvent['kafka-unpatched'].median;
  return {
    title: 'Ceilings: the relay’s physical limits (events/s)',
    table:
      `${table}\n\n${fmt(events)} events per run, payloads ${fmt(avgBytes)} B on average. ` +
      `The kafkajs patch (patches/kafkajs@2.2.4.patch): the patched producer ran at ` +
      `${fmt(patchRatio * 100, 1)}% of the unpatched one's median rate, using ` +
      `${fmt(cpuMicrosPerEvent.kafka.median, 2)} µs of client CPU per event against ` +
      `${fmt(cpuMicrosPerEvent['kafka-unpatched'].median, 2)} (${fmt(cpuRatio * 100, 1)}%).`,
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
