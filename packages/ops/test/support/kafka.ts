import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type IHeaders, type Producer } from 'kafkajs';
import { inject } from 'vitest';

export function testKafka(): Kafka {
  return new Kafka({
    clientId: 'ops-test',
    brokers: inject('kafkaBrokers'),
    logLevel: logLevel.NOTHING,
  });
}

export async function createTopic(kafka: Kafka, name: string): Promise<string> {
  const topic = `test.${name}.${randomBytes(4).toString('hex')}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3 }] });
  await admin.disconnect();
  return topic;
}

/** An idempotent producer, as the relay uses. */
export async function idempotentProducer(kafka: Kafka): Promise<Producer> {
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  return producer;
}

export interface Received {
  key: string;
  value: string;
  offset: string;
  partition: number;
  headers: Record<string, string>;
}

export function decodeHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {}))
    out[k] = Array.isArray(v) ? String(v[0]) : String(v);
  return out;
}

/** Reads `topic` from the start with a fresh group until `count` messages arrived, plus a settle time. */
export async function readTopic(
  kafka: Kafka,
  topic: string,
  count: number,
  { timeoutMs = 30_000, settleMs = 500 } = {},
): Promise<Received[]> {
  const consumer = kafka.consumer({ groupId: `reader-${randomBytes(4).toString('hex')}` });
  const received: Received[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let reached: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (reached = resolve));
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      received.push({
        key: message.key?.toString() ?? '',
        value: message.value?.toString() ?? '',
        offset: message.offset,
        partition,
        headers: decodeHeaders(message.headers),
      });
      if (received.length >= count) reached();
    },
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([done, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  await consumer.disconnect();
  return received;
}
