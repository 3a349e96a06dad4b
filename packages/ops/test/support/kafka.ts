import { relayPartitioner } from '@outbox/core';
import { createTopics } from '@outbox/testkit';
import type { Kafka, Producer } from 'kafkajs';

/** One uniquely named topic (3 partitions); returns its name. */
export async function createTopic(kafka: Kafka, name: string): Promise<string> {
  const topics = await createTopics(kafka, [name]);
  return topics[name] as string;
}

/** An idempotent producer, as the relay and the ops CLI's replay use. */
export async function idempotentProducer(kafka: Kafka): Promise<Producer> {
  const producer = kafka.producer({
    // Remembers each message's partition: replay checks each was acknowledged.
    createPartitioner: relayPartitioner,
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  return producer;
}
