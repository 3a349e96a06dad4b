import { randomUUID } from 'node:crypto';
import { toMessage, type OutboxRow } from '@outbox/core';
import { Partitioners } from 'kafkajs';
import type { BenchContext, ScenarioResult } from '../env/context.ts';
import { createSchema } from '../env/db.ts';
import { createTopic, deleteTopics, kafkaClient } from '../env/kafka.ts';
import { startService } from '../env/service.ts';
import { markdownTable } from '../report/table.ts';
import { alternate, fmt, ratio, spread, summarize, type Summary } from '../stats.ts';

/**
 * Scenario 8, the real inventory-consumer's throughput (services/inventory-consumer as
 * the demo runs it: inbox, FIFO check, delivery rows, a log line per event) on a
 * pre-filled 6-partition orders topic, by CONSUMER_BATCH_MAX: 1 is the seed's consumer
 * (one transaction and one offset commit per message), 100 the default (one per chunk of
 * up to 100 messages of a partition). The rate is timed from the first consumer_deliveries
 * row to the last (polled), so the group join is outside.
 */
const VARIANTS = [
  { key: 'per-message', label: 'one transaction per message (CONSUMER_BATCH_MAX=1)', batch: 1 },
  { key: 'chunked', label: 'one transaction per chunk (CONSUMER_BATCH_MAX=100)', batch: 100 },
] as const;
const SKUS = ['sku-1', 'sku-2', 'sku-3', 'sku-4', 'sku-5'];

function orderCreated(i: number): ReturnType<typeof toMessage> {
  const orderId = randomUUID();
  const row: OutboxRow = {
    id: String(i + 1),
    aggregate_type: 'order',
    aggregate_id: orderId,
    event_type: 'OrderCreated',
    event_version: 2,
    payload: JSON.stringify({
      orderId,
      userId: (i % 50) + 1,
      sku: SKUS[i % SKUS.length],
      quantity: 1,
      seq: 1,
      source: 'api',
    }),
    headers: {},
    created_at: new Date(),
    attempts: 0,
  };
  return toMessage(row);
}

export async function benchConsumer(ctx: BenchContext): Promise<ScenarioResult> {
  const events = ctx.quick ? 1_000 : 6_000;
  // A fresh prefix each run: re-creating a topic whose deletion is still under way fails.
  const prefix = `bench.consumer.${Date.now()}.`;
  const topic = `${prefix}orders.events`;
  const kafka = kafkaClient(ctx.kafkaBrokers, 'bench-consumer');
  await createTopic(kafka, topic);
  await createTopic(kafka, `${prefix}orders.dlq`);
  const samples: Record<string, number[]> = Object.fromEntries(VARIANTS.map((v) => [v.key, []]));
  try {
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    for (let from = 0; from < events; from += 1_000) {
      const messages = Array.from({ length: Math.min(1_000, events - from) }, (_, k) =>
        orderCreated(from + k),
      );
      await producer.send({ topic, acks: -1, messages });
    }
    await producer.disconnect();

    let run = 0;
    await alternate(ctx.rounds, VARIANTS, async (variant, round) => {
      run += 1;
      const schema = await createSchema(ctx.databaseUrl, 'bench_consumer', { migrated: false });
      const consumer = await startService(
        'inventory-consumer',
        {
          DATABASE_URL: ctx.databaseUrl,
          DATABASE_SCHEMA: schema.name,
          KAFKA_BROKERS: ctx.kafkaBrokers.join(','),
          TOPIC_PREFIX: prefix,
          GROUP_ID: `bench-consumer-${Date.now()}-${run}`,
          CONSUMER_BATCH_MAX: String(variant.batch),
        },
        [],
        /ready on/,
      );
      try {
        await schema.pool.query(
          'INSERT INTO inventory (sku, available) SELECT unnest($1::text[]), 1000000000',
          [SKUS],
        );
        const deadline = performance.now() + 300_000;
        const count = async () =>
          Number(
            (
              await schema.pool.query<{ n: string }>(
                'SELECT count(*) AS n FROM consumer_deliveries',
              )
            ).rows[0]!.n,
          );
        // Polled every 50 ms from here: received_at is each transaction's start, which
        // would leave the last chunk's own time out of a chunked run.
        let first: number | undefined;
        for (;;) {
          const n = await count();
          const now = performance.now();
          if (n > 0) first ??= now;
          if (n >= events) break;
          if (now > deadline) throw new Error(`${variant.key}: ${n} of ${events} applied in 300 s`);
          await new Promise((r) => setTimeout(r, 50));
        }
        const rate = events / ((performance.now() - first!) / 1000);
        samples[variant.key]!.push(rate);
        ctx.progress(`consumer round ${round}/${ctx.rounds} ${variant.key}: ${fmt(rate)} events/s`);
      } finally {
        await consumer.stop();
        await schema.drop();
      }
    });
  } finally {
    await deleteTopics(kafka, prefix).catch(() => undefined);
  }
  const rates = Object.fromEntries(
    VARIANTS.map((v) => [v.key, summarize(samples[v.key]!)]),
  ) as Record<string, Summary>;
  const table = markdownTable(
    ['inventory-consumer', 'events/s median (min–max)', '÷ per message'],
    VARIANTS.map((v) => [
      v.label,
      spread(rates[v.key]!),
      ratio(rates[v.key]!.median, rates['per-message']!.median),
    ]),
  );
  return {
    title: `inventory-consumer throughput over ${fmt(events)} OrderCreated events (6 partitions)`,
    table: `${table}\n\nThe demo at 100 orders/s publishes ~170 events/s; the consumer must apply more than that to ever catch up after a fault.`,
    data: { events, rates },
    chartTitle: 'consumer: events/s, chunked ÷ per message',
    chart: [
      {
        label: 'chunked ÷ per message',
        value: rates.chunked!.median / rates['per-message']!.median,
      },
    ],
  };
}
