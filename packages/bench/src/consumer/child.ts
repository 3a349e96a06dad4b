import { handleOnce, withTransaction } from '@outbox/core';
import type { KafkaMessage } from 'kafkajs';
import pg from 'pg';
import { kafkaClient } from '../env/kafka.ts';
import { serveWorker, workerSpec } from '../env/worker.ts';
import { nowMs } from '../latency/clock.ts';

/**
 * A consumer group member in a process of its own, applying each event in a
 * transaction with (or without) the inbox, and recording when that COMMIT returned:
 *   message — one transaction per message, core's handleOnce (the seed's
 *             InventoryConsumer, and services/inventory-consumer);
 *   batch   — one transaction per fetched batch of a partition: the inbox markers in
 *             one INSERT … ON CONFLICT DO NOTHING RETURNING, the effect for the new ones.
 * The effect is one row per event in bench_effects (no unique key: without the inbox,
 * a redelivery would apply twice, which is what the inbox prevents).
 */
export interface ConsumerSpec {
  databaseUrl: string;
  schema: string;
  brokers: string[];
  topic: string;
  groupId: string;
  mode: 'message' | 'batch';
  inbox: boolean;
  fromBeginning: boolean;
}

export interface Collected {
  ids: string[];
  /** Monotonic ms (latency/clock.ts) when the event's transaction committed. */
  committedAt: number[];
  /** Monotonic ms when the consumer got the message. */
  receivedAt: number[];
  /** Wall-clock ms: Kafka's CreateTime (stamped by the relay's producer) and receipt. */
  producedWall: number[];
  receivedWall: number[];
}

const spec = workerSpec<ConsumerSpec>();
const CONSUMER = 'bench';
const pool = new pg.Pool({
  connectionString: spec.databaseUrl,
  options: `-c search_path=${spec.schema}`,
  max: 6,
});
pool.on('error', () => undefined);
const kafka = kafkaClient(spec.brokers, `bench-consumer-${spec.mode}`);
const consumer = kafka.consumer({
  groupId: spec.groupId,
  sessionTimeout: 10_000,
  heartbeatInterval: 1_000,
  maxWaitTimeInMs: 100,
});
let out: Collected = fresh();
function fresh(): Collected {
  return { ids: [], committedAt: [], receivedAt: [], producedWall: [], receivedWall: [] };
}

function record(messages: KafkaMessage[], ids: string[], receivedAt: number, receivedWall: number) {
  const committed = nowMs();
  messages.forEach((m, i) => {
    out.ids.push(ids[i]!);
    out.committedAt.push(committed);
    out.receivedAt.push(receivedAt);
    out.producedWall.push(Number(m.timestamp));
    out.receivedWall.push(receivedWall);
  });
}

const eventIdOf = (m: KafkaMessage) => m.headers?.event_id?.toString();

await consumer.connect();
await consumer.subscribe({ topic: spec.topic, fromBeginning: spec.fromBeginning });
const joined = new Promise<void>((resolve) =>
  consumer.on(consumer.events.GROUP_JOIN, () => resolve()),
);
if (spec.mode === 'message') {
  await consumer.run({
    partitionsConsumedConcurrently: 6,
    eachMessage: async ({ topic, partition, message }) => {
      const eventId = eventIdOf(message);
      if (!eventId) return;
      const receivedAt = nowMs();
      const receivedWall = Date.now();
      const effect = async (client: pg.ClientBase): Promise<void> => {
        await client.query('INSERT INTO bench_effects (event_id) VALUES ($1)', [eventId]);
      };
      await withTransaction(pool, async (client): Promise<unknown> =>
        spec.inbox
          ? handleOnce(
              client,
              { consumer: CONSUMER, eventId, topic, partition, offset: message.offset },
              effect,
            )
          : effect(client),
      );
      record([message], [eventId], receivedAt, receivedWall);
    },
  });
} else {
  await consumer.run({
    partitionsConsumedConcurrently: 6,
    eachBatch: async ({ batch }) => {
      const messages = batch.messages.filter((m) => eventIdOf(m) !== undefined);
      if (messages.length === 0) return;
      const receivedAt = nowMs();
      const receivedWall = Date.now();
      const ids = messages.map((m) => eventIdOf(m)!);
      await withTransaction(pool, async (client) => {
        let apply = ids;
        if (spec.inbox) {
          const { rows } = await client.query<{ event_id: string }>(
            `INSERT INTO inbox (consumer, event_id, topic, kafka_partition, kafka_offset)
             SELECT $1, t.event_id, $2, $3, t.kafka_offset
             FROM unnest($4::text[], $5::bigint[]) AS t(event_id, kafka_offset)
             ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id`,
            [CONSUMER, batch.topic, batch.partition, ids, messages.map((m) => m.offset)],
          );
          apply = rows.map((r) => r.event_id);
        }
        await client.query('INSERT INTO bench_effects (event_id) SELECT unnest($1::text[])', [
          apply,
        ]);
      });
      record(messages, ids, receivedAt, receivedWall);
    },
  });
}
await joined;

serveWorker(
  {
    count: () => out.ids.length,
    collect: () => {
      const collected = out;
      out = fresh();
      return collected;
    },
  },
  async () => {
    await consumer.disconnect();
    await pool.end();
  },
);
