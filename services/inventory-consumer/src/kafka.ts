import { relayPartitioner, type Logger } from '@outbox/core';
import { kafkaClient } from '@outbox/lab';
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
