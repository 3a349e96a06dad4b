import { kafkaClient, relayPartitioner, type Logger } from '@outbox/core';
import type { Kafka, Producer } from 'kafkajs';
import type { ConsumerConfig } from './config.ts';

/** The consumer's Kafka client, logging through pino (kafkajs's default retries). */
export function createKafka(
  config: Pick<ConsumerConfig, 'KAFKA_BROKERS' | 'CONSUMER_NAME'>,
  log: Logger,
): Kafka {
  return kafkaClient(config, `inventory-consumer.${config.CONSUMER_NAME}`, log);
}

/**
 * The producer of the dead-letter topic (not connected). Not idempotent, on purpose: a
 * dead letter retried after a lost answer may be parked twice (a duplicate on the DLQ,
 * which deadLetter accepts anyway), but there are no sequence numbers for kafkajs to
 * wind back after such a fault, so the next, different dead letter cannot be taken by
 * the broker for the lost one. An idempotent producer here would refuse every send
 * after an unknown outcome (sendAcknowledged) and stall the consumer until replaced.
 */
export function createDeadLetterProducer(kafka: Kafka): Producer {
  return kafka.producer({
    // Java-compatible murmur2, as the relay's, that remembers each message's partition:
    // deadLetter checks the broker acknowledged it.
    createPartitioner: relayPartitioner,
    allowAutoTopicCreation: false,
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
