import {
  createTestDb,
  createTopicPrefix,
  stopAll,
  type ServiceProcess,
  type TestDb,
} from '@outbox/testkit';
import type { Kafka, Producer } from 'kafkajs';
import { testProducer } from './events.ts';

/** What every consumer test starts from. */
export interface ConsumerFixture {
  /** A schema stocked with 100 of each TEST_SKUS. */
  db: TestDb;
  prefix: string;
  /** The prefix's orders topic (as the services create it); its dead-letter topic exists too. */
  topic: string;
  deadLetter: string;
  producer: Producer;
}

export async function openFixture(kafka: Kafka): Promise<ConsumerFixture> {
  const db = await createTestDb({ stock: 100 });
  const topics = await createTopicPrefix(kafka, { deadLetter: true });
  return { db, ...topics, producer: await testProducer(kafka) };
}

/** Stops the test's consumers first (they hold connections to both), then the rest. */
export async function closeFixture(
  procs: ServiceProcess[],
  { db, producer }: Pick<ConsumerFixture, 'db' | 'producer'>,
): Promise<void> {
  await stopAll(procs);
  await producer.disconnect();
  await db.close();
}
