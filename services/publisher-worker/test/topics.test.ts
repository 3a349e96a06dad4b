import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTestDb,
  demoTopicPartitions,
  type ServiceProcess,
  startService,
  stopAll,
  type TestDb,
  testKafka,
} from '@outbox/testkit';
import { workerEnv } from './support/outbox.ts';

/** The demo's topics have one definition (core's demoTopicSpecs), whoever starts first. */
describe('publisher-worker started first creates the demo topics as every service would', () => {
  const kafka = testKafka();
  let db: TestDb;
  const procs: ServiceProcess[] = [];

  beforeEach(async () => {
    db = await createTestDb();
  });
  afterEach(async () => {
    await stopAll(procs);
    await db.close();
  });

  it('orders.events and its dead-letter topic with the specified partitions', async () => {
    const prefix = `test-${randomBytes(4).toString('hex')}.`;
    procs.push(await startService(workerEnv(db, prefix, { REPLICA_ID: 'w1' })));
    const { actual, expected } = await demoTopicPartitions(kafka, prefix);
    expect(actual).toEqual(expected);
  });
});
