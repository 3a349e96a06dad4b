import { randomBytes } from 'node:crypto';
import { demoTopics } from '@outbox/core';
import { Kafka, logLevel, type IHeaders } from 'kafkajs';
import { inject } from 'vitest';

export function testKafka(): Kafka {
  return new Kafka({
    clientId: 'publisher-worker-test',
    brokers: inject('kafkaBrokers'),
    logLevel: logLevel.NOTHING,
  });
}

/** A unique TOPIC_PREFIX with its orders topic created (6 partitions, as the worker would). */
export async function createTopicPrefix(kafka: Kafka): Promise<{ prefix: string; topic: string }> {
  const prefix = `test-${randomBytes(4).toString('hex')}.`;
  const topic = demoTopics(prefix).orders;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 6 }] });
  await admin.disconnect();
  return { prefix, topic };
}

export interface Received {
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
 * Reads `topic` from the beginning with a fresh consumer group until `until` holds
 * for what arrived (or the timeout), then `settleMs` more to catch late extras.
 */
export async function readTopic(
  kafka: Kafka,
  topic: string,
  {
    until = () => false,
    timeoutMs = 20_000,
    settleMs = 500,
  }: { until?: (received: Received[]) => boolean; timeoutMs?: number; settleMs?: number } = {},
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
        partition,
        offset: message.offset,
        key: message.key?.toString() ?? '',
        value: message.value?.toString() ?? '',
        headers: decodeHeaders(message.headers),
      });
      if (until(received)) reached();
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
