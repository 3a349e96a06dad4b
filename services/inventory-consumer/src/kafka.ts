import { kafkaClient, type Logger } from '@outbox/core';
import type { Kafka } from 'kafkajs';
import type { ConsumerConfig } from './config.ts';

/** The consumer's Kafka client, logging through pino (kafkajs's default retries). */
export function createKafka(
  config: Pick<ConsumerConfig, 'KAFKA_BROKERS' | 'CONSUMER_NAME'>,
  log: Logger,
): Kafka {
  return kafkaClient(config, `inventory-consumer.${config.CONSUMER_NAME}`, log);
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
