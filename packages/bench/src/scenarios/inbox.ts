import { randomUUID } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import type { BenchContext, ScenarioResult } from '../env/context.ts';
import type { Collected, ConsumerSpec } from '../consumer/child.ts';
import { createSchema } from '../env/db.ts';
import { createTopic, deleteTopics, kafkaClient } from '../env/kafka.ts';
import { orderPayload } from '../env/payload.ts';
import { EFFECTS_DDL } from '../env/tables.ts';
import { startWorker } from '../env/worker.ts';
import { markdownTable } from '../report/table.ts';
import { alternate, fmt, ratio, spread, summarize, type Summary } from '../stats.ts';

/**
 * Scenario 7, the inbox's cost: consumer throughput with and without the inbox insert,
 * for a consumer that commits per message (core's handleOnce, as inventory-consumer)
 * and one that commits per fetched batch. Every run reads the same pre-filled topic
 * from the beginning in a fresh group; the rate is taken from the consumer's own clock
 * (first message received → last transaction committed), so the group join is outside.
 */
const VARIANTS = [
  {
    key: 'message-inbox',
    label: 'per message, with inbox (handleOnce)',
    mode: 'message',
    inbox: true,
  },
  { key: 'message-plain', label: 'per message, no inbox', mode: 'message', inbox: false },
  {
    key: 'batch-inbox',
    label: 'per batch, with inbox (one INSERT … ON CONFLICT per batch)',
    mode: 'batch',
    inbox: true,
  },
  { key: 'batch-plain', label: 'per batch, no inbox', mode: 'batch', inbox: false },
] as const;

export async function benchInbox(ctx: BenchContext): Promise<ScenarioResult> {
  const events = ctx.quick ? 1_000 : 8_000;
  const prefix = 'bench.inbox.';
  const topic = `${prefix}orders.events`;
  const kafka = kafkaClient(ctx.kafkaBrokers, 'bench-inbox');
  await createTopic(kafka, topic);
  const schema = await createSchema(ctx.databaseUrl, 'bench_inbox');
  const samples: Record<string, number[]> = Object.fromEntries(VARIANTS.map((v) => [v.key, []]));
  try {
    await schema.pool.query(EFFECTS_DDL);
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    for (let from = 0; from < events; from += 1_000) {
      await producer.send({
        topic,
        acks: -1,
        messages: Array.from({ length: Math.min(1_000, events - from) }, (_, k) => {
          const orderId = randomUUID();
          return {
            key: orderId,
            value: JSON.stringify(orderPayload(from + k, orderId)),
            headers: { event_id: String(from + k + 1), event_type: 'OrderCreated' },
          };
        }),
      });
    }
    await producer.disconnect();

    let run = 0;
    await alternate(ctx.rounds, VARIANTS, async (variant, round) => {
      run += 1;
      await schema.pool.query('TRUNCATE inbox, bench_effects');
      const consumer = await startWorker('consumer/child.ts', {
        databaseUrl: ctx.databaseUrl,
        schema: schema.name,
        brokers: ctx.kafkaBrokers,
        topic,
        groupId: `bench-inbox-${Date.now()}-${run}`,
        mode: variant.mode,
        inbox: variant.inbox,
        fromBeginning: true,
      } satisfies ConsumerSpec);
      try {
        const deadline = performance.now() + 180_000;
        while ((await consumer.request<number>({ type: 'count' })) < events) {
          if (performance.now() > deadline)
            throw new Error(`${variant.key}: not all ${events} consumed`);
          await new Promise((r) => setTimeout(r, 100));
        }
        const got = await consumer.request<Collected>({ type: 'collect' });
        const seconds = (Math.max(...got.committedAt) - Math.min(...got.receivedAt)) / 1000;
        const rate = events / seconds;
        samples[variant.key]!.push(rate);
        ctx.progress(`inbox round ${round}/${ctx.rounds} ${variant.key}: ${fmt(rate)} events/s`);
      } finally {
        await consumer.stop();
      }
    });
  } finally {
    await schema.drop();
    await deleteTopics(kafka, prefix).catch(() => undefined);
  }
  const rates = Object.fromEntries(
    VARIANTS.map((v) => [v.key, summarize(samples[v.key]!)]),
  ) as Record<string, Summary>;
  const table = markdownTable(
    ['consumer', 'events/s median (min–max)', 'with inbox ÷ without'],
    VARIANTS.map((v) => [
      v.label,
      spread(rates[v.key]!),
      v.inbox ? ratio(rates[v.key]!.median, rates[`${v.mode}-plain`]!.median) : '100%',
    ]),
  );
  return {
    title: `Inbox cost: consumer throughput over ${fmt(events)} events (6 partitions, 6 in parallel)`,
    table: `${table}\n\nEach event's effect is one INSERT; with the inbox, the marker INSERT … ON CONFLICT DO NOTHING runs in the same transaction.`,
    data: { events, rates },
    chartTitle: 'inbox: consumer events/s, with inbox ÷ without',
    chart: (['message', 'batch'] as const).map((m) => ({
      label: `per ${m}`,
      value: rates[`${m}-inbox`]!.median / rates[`${m}-plain`]!.median,
    })),
  };
}
