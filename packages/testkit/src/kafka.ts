import { randomBytes } from 'node:crypto';
import { demoTopicSpecs } from '@outbox/lab';
import { Kafka, logLevel, type IHeaders, type ITopicConfig } from 'kafkajs';
import { inject } from 'vitest';

export function testKafka(clientId = 'outbox-test'): Kafka {
  return new Kafka({ clientId, brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING });
}

/** Creates uniquely named topics (one per name given, 3 partitions) and returns their names. */
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

/**
 * A unique TOPIC_PREFIX with the demo's orders topic created as the services create it
 * (`demoTopicSpecs`: 6 partitions, unless `partitions` says otherwise) and, when asked,
 * its dead-letter topic (as specified: 1 partition).
 */
export async function createTopicPrefix(
  kafka: Kafka,
  { partitions, deadLetter = false }: { partitions?: number; deadLetter?: boolean } = {},
): Promise<{ prefix: string; topic: string; deadLetter: string }> {
  const prefix = `test-${randomBytes(4).toString('hex')}.`;
  const specs = demoTopicSpecs(prefix);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      { ...specs.orders, numPartitions: partitions ?? specs.orders.numPartitions },
      ...(deadLetter ? [specs.deadLetter] : []),
    ],
  });
  await admin.disconnect();
  return { prefix, topic: specs.orders.topic, deadLetter: specs.deadLetter.topic };
}

/**
 * The partition count of each demo topic of `prefix` as Kafka has it (undefined: missing)
 * and as `demoTopicSpecs` specifies it, for `expect(actual).toEqual(expected)`.
 */
export async function demoTopicPartitions(
  kafka: Kafka,
  prefix: string,
): Promise<{ actual: Record<string, number | undefined>; expected: Record<string, number> }> {
  const specs = Object.values(demoTopicSpecs(prefix));
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const present = specs.filter((s) => existing.has(s.topic)).map((s) => s.topic);
    const { topics } = await admin.fetchTopicMetadata({ topics: present });
    return {
      actual: Object.fromEntries(
        specs.map((s) => [s.topic, topics.find((t) => t.name === s.topic)?.partitions.length]),
      ),
      expected: Object.fromEntries(specs.map((s) => [s.topic, s.numPartitions])),
    };
  } finally {
    await admin.disconnect();
  }
}

export interface Received {
  topic: string;
  partition: number;
  offset: string;
  key: string;
  value: string;
  headers: Record<string, string>;
}

export function decodeHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {}))
    out[k] = Array.isArray(v) ? String(v[0]) : String(v);
  return out;
}

export interface ReadOptions {
  /** Stop once this holds for what arrived (a number n means "n messages"). */
  until?: number | ((received: Received[]) => boolean);
  timeoutMs?: number;
  /** How long to keep reading after `until`, to catch late extras (duplicates). */
  settleMs?: number;
}

/**
 * Reads `topic` from the beginning with a fresh consumer group until `until` holds
 * for what arrived (or the timeout), then `settleMs` more. `readTopic(k, t, 3)` is
 * short for `readTopic(k, t, { until: 3 })`.
 */
export async function readTopic(
  kafka: Kafka,
  topic: string,
  untilOrOptions: number | ReadOptions = {},
  more: Omit<ReadOptions, 'until'> = {},
): Promise<Received[]> {
  const options =
    typeof untilOrOptions === 'number' ? { ...more, until: untilOrOptions } : untilOrOptions;
  const { until = () => false, timeoutMs = 30_000, settleMs = 500 } = options;
  const reachedBy = typeof until === 'number' ? (r: Received[]) => r.length >= until : until;
  const consumer = kafka.consumer({ groupId: `reader-${randomBytes(4).toString('hex')}` });
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
      if (reachedBy(received)) reached();
    },
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([done, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  await consumer.disconnect();
  return received;
}

/** Distinct event_id headers of what was read. */
export const eventIds = (received: Received[]) => new Set(received.map((m) => m.headers.event_id));
