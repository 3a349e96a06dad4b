import { relayPartitioner } from '@outbox/core';
import { Kafka, logLevel, type Producer } from 'kafkajs';

/** A kafkajs client that only reports errors (benchmarks print their own progress). */
export function kafkaClient(brokers: string[], clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers,
    connectionTimeout: 3_000,
    requestTimeout: 30_000,
    logLevel: logLevel.ERROR,
  });
}

/**
 * The producer every publisher of the benchmarks drives, configured as
 * services/publisher-worker configures the relay's: murmur2 partitioner, idempotent,
 * one request in flight. Only the code around it differs between the variants.
 */
export function relayProducer(kafka: Kafka): Producer {
  return kafka.producer({
    // The relay's: murmur2, remembering each message's partition for the ack check.
    createPartitioner: relayPartitioner,
    allowAutoTopicCreation: false,
    idempotent: true,
    maxInFlightRequests: 1,
  });
}

export async function createTopic(kafka: Kafka, topic: string, numPartitions = 6): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = await admin.listTopics();
    if (!existing.includes(topic)) {
      await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions }] });
    }
  } finally {
    await admin.disconnect();
  }
}

/** Removes the topics a scenario created (their logs would fill the broker's disk). */
export async function deleteTopics(kafka: Kafka, prefix: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
}

/** Sum of the high watermarks of a topic: how many messages it holds. */
export async function topicSize(kafka: Kafka, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((sum, p) => sum + Number(p.high), 0);
  } finally {
    await admin.disconnect();
  }
}
