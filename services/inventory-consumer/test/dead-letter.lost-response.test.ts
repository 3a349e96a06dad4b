import { type FaultProxy, kafkaThroughProxy, loseNextResponse } from '@outbox/fault-proxy';
import {
  createTestDb,
  createTopics,
  readTopic,
  type Received,
  type TestDb,
  testKafka,
  waitFor,
} from '@outbox/testkit';
import type { KafkaMessage, Producer } from 'kafkajs';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { deadLetter, type DeadLetter } from '../src/dead-letter.ts';
import { createDeadLetterProducer } from '../src/kafka.ts';

/**
 * The relay's ambiguous fault, met by the dead-letter producer: the broker appended
 * a dead letter and its answer was lost. A later, different dead letter must be on
 * the dead-letter topic once deadLetter() resolves (the consumer then commits the
 * source offset: a dead letter that is not there is a lost message).
 */
describe('dead-letter after a produce whose response was lost', () => {
  const [broker] = inject('kafkaBrokers');
  const direct = testKafka();
  let proxy: FaultProxy;
  let db: TestDb;
  let producer: Producer;
  let dlq: string;

  beforeEach(async () => {
    const through = await kafkaThroughProxy(broker!, 'dead-letter-lost-response');
    proxy = through.proxy;
    const proxied = through.kafka;
    db = await createTestDb();
    // The producer exactly as the consumer builds it.
    producer = createDeadLetterProducer(proxied);
    await producer.connect();
    dlq = (await createTopics(direct, ['dlq'], { numPartitions: 1 })).dlq!;
  });
  afterEach(async () => {
    proxy.setMode({ kind: 'pass' });
    await producer.disconnect();
    await proxy.close();
    await db.close();
  });

  const letter = (offset: string): DeadLetter => ({
    consumer: 'inventory',
    topic: 'orders.events',
    partition: 0,
    message: {
      key: Buffer.from(`order-${offset}`),
      value: Buffer.from('{not json'),
      headers: {},
      offset,
      timestamp: String(Date.now()),
      attributes: 0,
    } satisfies KafkaMessage,
    reason: 'invalid_json',
    detail: 'Unexpected token n',
  });
  const offsetsOn = (received: Received[]) => received.map((m) => m.headers.dlq_source_offset);

  it('a later, different dead letter is on the topic once deadLetter() resolves', async () => {
    // The producer is connected and has the topic's metadata before the fault.
    await deadLetter(db.pool, producer, dlq, letter('1'));
    const fault = loseNextResponse(proxy);
    await expect(deadLetter(db.pool, producer, dlq, letter('2'))).rejects.toThrow();
    await fault.acted;
    fault.heal();
    // The broker did append it: the fault is the ambiguous one.
    expect(offsetsOn(await readTopic(direct, dlq, 2))).toEqual(['1', '2']);

    // The consumer retries the message that failed (eachMessage threw), or, after a
    // rebalance, dead-letters another one first: that one.
    await waitFor(
      () =>
        deadLetter(db.pool, producer, dlq, letter('3')).then(
          () => true,
          () => false,
        ),
      { timeoutMs: 60_000, intervalMs: 200, what: 'the next dead letter' },
    );
    const received = await readTopic(direct, dlq, {
      until: (r) => offsetsOn(r).includes('3'),
      timeoutMs: 15_000,
    });
    expect(offsetsOn(received)).toContain('3');
  });
});
