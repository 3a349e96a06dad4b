import type { Logger } from '@outbox/core';
import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { ConsumerConfig } from './config.ts';

const levels: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/** kafkajs logs into our pino logger instead of its own console format. */
function pinoLogCreator(log: Logger) {
  return () =>
    ({ level, log: entry }: LogEntry) => {
      const { message, ...rest } = entry;
      log[levels[level] ?? 'info'](rest, message);
    };
}

/** The consumer's Kafka client, logging through pino. */
export function createKafka(
  config: Pick<ConsumerConfig, 'KAFKA_BROKERS' | 'CONSUMER_NAME'>,
  log: Logger,
): Kafka {
  return new Kafka({
    clientId: `inventory-consumer.${config.CONSUMER_NAME}`,
    brokers: config.KAFKA_BROKERS,
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    logLevel: logLevel.WARN,
    logCreator: pinoLogCreator(log.child({ component: 'kafkajs' })),
  });
}

/** Creates the topics that are missing (idempotent; replicas and the worker may race). */
export async function ensureTopics(
  kafka: Kafka,
  topics: { topic: string; numPartitions: number }[],
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    if (missing.length > 0) await admin.createTopics({ waitForLeaders: true, topics: missing });
  } catch (error) {
    if ((error as { type?: string }).type !== 'TOPIC_ALREADY_EXISTS') throw error;
  } finally {
    await admin.disconnect();
  }
}
