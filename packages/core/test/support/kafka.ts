import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Consumer, type IHeaders, type ITopicConfig } from 'kafkajs';
import { inject } from 'vitest';

export function testKafka(clientId = 'core-test'): Kafka {
  return new Kafka({ clientId, brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING });
}

/** Creates uniquely named topics (one per name given) and returns their names. */
export async function createTopics(
  kafka: Kafka,
  names: string[],
  extra: Partial<ITopicConfig> = {},
): Promise<Record<string, string>> {
  const suffix = randomBytes(4).toString('hex');
  const topics = Object.fromEntries(names.map((n) => [n, `test.${n}.${suffix}`]));
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: Object.values(topics).map((topic) => ({ topic, numPartitions: 3, ...extra })),
  });
  await admin.disconnect();
  return topics;
}

export interface Received {
  topic: string;
  partition: number;
  offset: string;
  key: string;
  value: string;
  headers: Record<string, string>;
}

function decodeHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {}))
    out[k] = Array.isArray(v) ? String(v[0]) : String(v);
  return out;
}

/**
 * Reads a topic from the beginning with a fresh group until `count` messages arrived
 * (or the timeout), then waits `settleMs` more to catch any extra (duplicates).
 */
export async function readTopic(
  kafka: Kafka,
  topic: string,
  count: number,
  { timeoutMs = 30_000, settleMs = 500 } = {},
): Promise<Received[]> {
  const consumer: Consumer = kafka.consumer({
    groupId: `reader-${randomBytes(4).toString('hex')}`,
  });
  const received: Received[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let reached: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (reached = resolve));
  await consumer.run({
    eachMessage: async ({ topic: t, partition, message }) => {
      received.push({
        topic: t,
        partition,
        offset: message.offset,
        key: message.key?.toString() ?? '',
        value: message.value?.toString() ?? '',
        headers: decodeHeaders(message.headers),
      });
      if (received.length >= count) reached();
    },
  });
  const timer = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs));
  await Promise.race([done, timer]);
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  await consumer.disconnect();
  return received;
}
