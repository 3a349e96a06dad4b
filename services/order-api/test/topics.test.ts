import { randomBytes } from 'node:crypto';
import { demoTopicSpecs } from '@outbox/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demoTopicPartitions, testKafka } from '@outbox/testkit';
import { createTestDb, type TestDb } from './support/db.ts';
import { startService, type ServiceProcess } from './support/process.ts';

/**
 * The demo's topics have one definition (core's demoTopicSpecs): whichever service
 * starts first creates them with the same partition counts. order-api used to create
 * orders.events with 3 partitions, the worker and the consumer with 6.
 */
describe('order-api started first creates the demo topics as every service would', () => {
  const kafka = testKafka();
  let db: TestDb;
  let service: ServiceProcess | undefined;

  beforeEach(async () => {
    db = await createTestDb();
  });
  afterEach(async () => {
    await service?.stop();
    service = undefined;
    await db.close();
  });

  it('orders.events with 6 partitions, its dead-letter topic with 1', async () => {
    const prefix = `test-${randomBytes(4).toString('hex')}.`;
    const specs = demoTopicSpecs(prefix);
    expect([specs.orders.numPartitions, specs.deadLetter.numPartitions]).toEqual([6, 1]);
    service = await startService(db, prefix);
    const { actual, expected } = await demoTopicPartitions(kafka, prefix);
    expect(actual).toEqual(expected);
  });
});
