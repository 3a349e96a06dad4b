import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { demoTopicPartitions, testKafka } from './kafka.ts';

/** What a service's start gives back: something to stop after the test. */
export interface Stoppable {
  stop(): Promise<unknown>;
}

/**
 * The demo's topics have one definition (the lab's demoTopicSpecs): whichever service
 * starts first creates them with the same partition counts (order-api once created
 * orders.events with 3 partitions, the worker and the consumer with 6). `start` brings
 * the service up on a fresh topic prefix; the test then reads the partitions from Kafka.
 */
export function describeDemoTopicsCreatedBy(
  service: string,
  start: (prefix: string) => Promise<Stoppable>,
): void {
  describe(`${service} started first creates the demo topics as every service would`, () => {
    const kafka = testKafka();
    const started: Stoppable[] = [];
    afterEach(async () => {
      await Promise.all(started.splice(0).map((s) => s.stop()));
    });

    it('each demo topic with the partitions demoTopicSpecs gives it', async () => {
      const prefix = `test-${randomBytes(4).toString('hex')}.`;
      started.push(await start(prefix));
      const { actual, expected } = await demoTopicPartitions(kafka, prefix);
      expect(actual).toEqual(expected);
    });
  });
}
