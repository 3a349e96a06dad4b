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
import type { Producer } from 'kafkajs';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { replay } from '../src/index.ts';
import { age, appendEvents } from './support/db.ts';
import { idempotentProducer } from './support/kafka.ts';

/**
 * The relay's ambiguous fault, met by a replay: the broker appended a replayed batch
 * and its answer was lost, so kafkajs wound the sequence number back. A later replay
 * of other events with the same producer must not be taken by the broker for the
 * lost batch ("duplicate", nothing written) and reported as published.
 */
describe('replay after a produce whose response was lost', () => {
  const [broker] = inject('kafkaBrokers');
  const direct = testKafka();
  let proxy: FaultProxy;
  let db: TestDb;
  let producer: Producer;
  let topic: string;

  beforeEach(async () => {
    const through = await kafkaThroughProxy(broker!, 'replay-lost-response');
    proxy = through.proxy;
    const proxied = through.kafka;
    db = await createTestDb();
    producer = await idempotentProducer(proxied);
    // One partition: every replayed event shares it.
    topic = (await createTopics(direct, ['replay'], { numPartitions: 1 })).replay!;
  });
  afterEach(async () => {
    proxy.setMode({ kind: 'pass' });
    await producer.disconnect();
    await proxy.close();
    await db.close();
  });

  const idsOn = (received: Received[]) => received.map((m) => m.headers.event_id);

  it('a later replay of other events publishes them or refuses; it never reports them published unsent', async () => {
    const [w] = await appendEvents(db, 'W', 1);
    const [a] = await appendEvents(db, 'A', 1);
    const [b] = await appendEvents(db, 'B', 1);
    await age(db, [w!, a!, b!], 0, true);

    // The producer is connected and has the topic's metadata before the fault.
    expect(
      await replay({ pool: db.pool, producer, range: { aggregateId: 'W' }, topic }),
    ).toMatchObject({ published: 1 });
    const fault = loseNextResponse(proxy);
    await expect(
      replay({ pool: db.pool, producer, range: { aggregateId: 'A' }, topic }),
    ).rejects.toThrow();
    await fault.acted;
    fault.heal();
    // The broker did append A: the fault is the ambiguous one.
    expect(idsOn(await readTopic(direct, topic, 2))).toEqual([w, a]);

    const outcome = await waitFor(
      () =>
        replay({ pool: db.pool, producer, range: { aggregateId: 'B' }, topic }).then(
          (report) => ({ report }),
          (error: unknown) => /renew|replace/i.test(String(error)) && { refused: error },
        ),
      { timeoutMs: 60_000, intervalMs: 200, what: 'the replay of B published or refused' },
    );
    if ('report' in outcome) {
      expect(outcome.report).toMatchObject({ published: 1 });
      const received = await readTopic(direct, topic, {
        until: (r) => idsOn(r).includes(b!),
        timeoutMs: 15_000,
      });
      expect(idsOn(received)).toContain(b);
    }
  });
});
