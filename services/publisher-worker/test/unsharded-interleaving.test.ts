import { OutboxRelay } from '@outbox/core';
import { demoTopics } from '@outbox/lab';
import type { Producer } from 'kafkajs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTestDb,
  createTopicPrefix,
  readTopic,
  sleep,
  type TestDb,
  testKafka,
} from '@outbox/testkit';
import { fifoViolations } from './support/fifo.ts';
import { append, orderEvents } from './support/outbox.ts';

/**
 * The deterministic version of "unsharded replicas can reorder an aggregate". Racing
 * two worker processes only sometimes shows it (see fifo.test.ts), so here two relays
 * run in-process on real PostgreSQL and Kafka, and the interleaving is forced: relay A
 * claims seq 1 and its produce is held at a gate (a real producer whose sendBatch
 * waits for the test, i.e. a slow network, not a mock); meanwhile relay B claims seq 2
 * and publishes it. Unsharded, B's claim skips A's locked row and goes ahead; sharded,
 * B cannot take the shard A holds (not assigned to it, or its advisory lock is taken),
 * so seq 2 waits for A's commit.
 */
describe('unsharded relays: the interleaving that breaks FIFO per aggregate', () => {
  const kafka = testKafka();
  let db: TestDb;
  let topic: string;
  let producer: Producer;

  beforeEach(async () => {
    db = await createTestDb();
    const { prefix } = await createTopicPrefix(kafka, { partitions: 6 });
    topic = demoTopics(prefix).orders;
    producer = kafka.producer();
    await producer.connect();
  });
  afterEach(async () => {
    await producer.disconnect();
    await db.close();
  });

  /** The real producer, with its sends held until `open()`. */
  function gatedProducer(): { producer: Producer; entered: Promise<void>; open: () => void } {
    let open: () => void = () => undefined;
    let entered: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const reached = new Promise<void>((resolve) => (entered = resolve));
    const gated = Object.create(producer) as Producer;
    gated.sendBatch = async (batch) => {
      entered();
      await gate;
      return producer.sendBatch(batch);
    };
    return { producer: gated, entered: reached, open };
  }

  async function interleave(sharded: boolean): Promise<{ bSent: number; violations: number }> {
    const ids = await append(db, orderEvents(2)); // seq 1 and seq 2 of one order
    const slow = gatedProducer();
    const relayA = new OutboxRelay({
      pool: db.pool,
      producer: slow.producer,
      topics: { order: topic },
      batchSize: 1,
      sharded,
      replicaId: 'a',
    });
    const relayB = new OutboxRelay({
      pool: db.pool,
      producer,
      topics: { order: topic },
      batchSize: 1,
      sharded,
      replicaId: 'b',
    });
    const tickA = relayA.tick(); // claims seq 1, then blocks in produce
    await slow.entered;
    const b = await relayB.tick(); // seq 2: published now (unsharded) or skipped (sharded)
    slow.open();
    await tickA;
    // Whatever is left (sharded: seq 2) goes out after A committed, by either relay.
    while ((await relayA.tick()).claimed + (await relayB.tick()).claimed > 0) await sleep(10);
    const received = await readTopic(kafka, topic, { until: (r) => r.length >= ids.length });
    expect(received.map((m) => m.headers.event_id).sort()).toEqual([...ids].sort());
    return { bSent: b.sent, violations: fifoViolations(received) };
  }

  it('unsharded: seq 2 overtakes seq 1 on the topic', async () => {
    const { bSent, violations } = await interleave(false);
    expect(bSent).toBe(1);
    expect(violations).toBe(1);
  });

  it('sharded: the second relay cannot claim the aggregate while the first holds it', async () => {
    const { bSent, violations } = await interleave(true);
    expect(bSent).toBe(0);
    expect(violations).toBe(0);
  });
});
