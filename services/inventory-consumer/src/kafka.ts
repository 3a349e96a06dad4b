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
