import {
  createTestDb,
  createTopicPrefix,
  stopAll,
  type ServiceProcess,
  type TestDb,
} from '@outbox/testkit';
import type { Kafka, Producer } from 'kafkajs';
import { afterEach, beforeEach } from 'vitest';
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
  /** Consumers the test started: stopped after it, before the schema and the producer go. */
  procs: ServiceProcess[];
}

/**
 * Registers the describe block's beforeEach/afterEach and returns the fixture they fill:
 * read its fields inside a test, never at describe time (they are set before each test).
 * `prepare` runs after the fixture is open, before each test (e.g. to alter the schema).
 */
export function useConsumerFixture(
  kafka: Kafka,
  prepare?: (fixture: ConsumerFixture) => Promise<unknown>,
): ConsumerFixture {
  const fixture: Partial<ConsumerFixture> & Pick<ConsumerFixture, 'procs'> = { procs: [] };
  beforeEach(async () => {
    fixture.db = await createTestDb({ stock: 100 });
    Object.assign(fixture, await createTopicPrefix(kafka, { deadLetter: true }));
    fixture.producer = await testProducer(kafka);
    await prepare?.(fixture as ConsumerFixture);
  });
  afterEach(async () => {
    // The consumers first: they hold connections to both.
    await stopAll(fixture.procs.splice(0));
    await fixture.producer?.disconnect();
    await fixture.db?.close();
  });
  return fixture as ConsumerFixture;
}
