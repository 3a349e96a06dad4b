import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { OutboxRelay, relayPartitioner } from '@outbox/core';
import {
  createTestDb,
  createTopicPrefix,
  startService,
  testKafka,
  waitFor,
  type ServiceProcess,
  type TestDb,
} from '@outbox/testkit';
import { Partitioners, type Kafka, type PartitionMetadata, type Producer } from 'kafkajs';
import { inject } from 'vitest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StatsMessage } from '../src/contract.ts';
import { startTestDashboard, type TestDashboard } from './support/dashboard.ts';
import { createOrder } from './support/rows.ts';

const serviceDir = (name: string) =>
  fileURLToPath(new URL(`../../${name}`, import.meta.url).toString());
const PARTITIONS = 3;

/** The partition kafkajs' DefaultPartitioner (the relay's and order-api's) gives a key. */
function partitionOf(key: string, partitions = PARTITIONS): number {
  const metadata: PartitionMetadata[] = Array.from({ length: partitions }, (_, i) => ({
    partitionErrorCode: 0,
    partitionId: i,
    leader: 0,
    replicas: [0],
    isr: [0],
    offlineReplicas: [],
  }));
  return Partitioners.DefaultPartitioner()({
    topic: 't',
    partitionMetadata: metadata,
    message: { key, value: null },
  });
}

/** `perPartition` order ids for each partition, so every partition gets some lag. */
function idsOnEveryPartition(perPartition: number): string[] {
  const counts = new Array<number>(PARTITIONS).fill(0);
  const ids: string[] = [];
  while (ids.length < perPartition * PARTITIONS) {
    const id = randomUUID();
    const p = partitionOf(id);
    if ((counts[p] ?? 0) < perPartition) {
      counts[p] = (counts[p] ?? 0) + 1;
      ids.push(id);
    }
  }
  return ids;
}

/**
 * "Orders without events" told apart, on the real stack: a consumer held back on
 * purpose (not running) while outbox orders are published, against naive orders whose
 * event the network lost after commit (the real order-api and its failure point).
 */
describe('orders without events: never published vs published, not consumed', () => {
  let db: TestDb;
  let dash: TestDashboard;
  let kafka: Kafka;
  let prefix: string;
  let producer: Producer;
  const services: ServiceProcess[] = [];

  const serviceEnv = () => ({
    DATABASE_URL: db.databaseUrl,
    DATABASE_SCHEMA: db.schema,
    KAFKA_BROKERS: inject('kafkaBrokers').join(','),
    TOPIC_PREFIX: prefix,
    // The naive network drop is a failure point: the services follow them only with chaos on.
    CHAOS_ENABLED: 'true',
  });
  const startConsumer = async () => {
    const consumer = await startService(serviceEnv(), {
      cwd: serviceDir('inventory-consumer'),
      timeoutMs: 120_000,
    });
    services.push(consumer);
    return consumer;
  };
  const stats = (what: string, check: (m: StatsMessage) => boolean, timeoutMs = 90_000) => {
    let last: StatsMessage | undefined;
    return waitFor(
      async () => {
        last = await dash.dashboard.engine.tick();
        return check(last) ? last : undefined;
      },
      { timeoutMs, intervalMs: 300, what },
    ).catch((error: Error) => {
      const { events: _e, processes: _p, ...rest } = last ?? ({} as StatsMessage);
      throw new Error(`${error.message}; last: ${JSON.stringify(rest)}`);
    });
  };
  const relayAll = async (relay: OutboxRelay) =>
    waitFor(
      async () => {
        await relay.tick();
        const { rows } = await db.pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL',
        );
        return rows[0]?.n === 0 ? true : undefined;
      },
      { timeoutMs: 60_000, what: 'the relay to publish every row' },
    );

  beforeAll(async () => {
    db = await createTestDb({ stock: 1000, max: 8 });
    kafka = testKafka('undelivered-test');
    ({ prefix } = await createTopicPrefix(kafka, { partitions: PARTITIONS, deadLetter: true }));
    producer = kafka.producer({
      createPartitioner: relayPartitioner,
      allowAutoTopicCreation: false,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    dash = await startTestDashboard(db, {
      TOPIC_PREFIX: prefix,
      SETTLE_SECONDS: '1',
      CONSUMER_STALL_SECONDS: '3',
    });
  });
  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.stop()));
  });
  afterAll(async () => {
    await dash?.close();
    await producer?.disconnect();
    await db?.close();
  });

  it('outbox mode, consumer held back: published, not consumed, with the lag per partition; no naive scenario', async () => {
    const relay = new OutboxRelay({
      pool: db.pool,
      producer,
      topics: { order: `${prefix}orders.events` },
      sharded: false,
    });
    // The group commits offsets once: one order through the real consumer.
    const consumer = await startConsumer();
    await createOrder(db.pool);
    await relayAll(relay);
    await stats('the first order delivered', (m) => m.totals.deliveries === 1);
    // Held back on purpose: no consumer runs while orders are published.
    await consumer.stop();

    const ids = idsOnEveryPartition(2);
    for (const orderId of ids) await createOrder(db.pool, { orderId });
    await relayAll(relay);
    const m = await stats(
      'the published orders counted without events',
      (s) => s.invariants.ordersWithoutEvents === ids.length,
    );
    // Every event is on the topic: this is no "network died after commit".
    expect(m.scenarios.latestFailure?.id ?? null).not.toBe('network_after_commit');
    expect(m.scenarios.counts.network_after_commit).toBe(0);
    expect(m.latestAnomaly?.scenario ?? null).toBeNull();

    const held = await stats(
      'published, not consumed, and the consumer stalled',
      (s) =>
        s.invariants.publishedNotConsumed === ids.length && s.consumerGroup?.state === 'stalled',
    );
    expect(held.invariants.neverPublished).toBe(0);
    const group = held.consumerGroup!;
    expect(group.groupId).toBe(`${prefix}inventory`);
    expect(group.topic).toBe(`${prefix}orders.events`);
    const expected = new Array<number>(PARTITIONS).fill(0);
    for (const id of ids) expected[partitionOf(id)]! += 1;
    expect(group.partitions.map((p) => p.partition)).toEqual([0, 1, 2]);
    expect(group.partitions.map((p) => p.lag)).toEqual(expected);
    for (const p of group.partitions) expect(p.lag).toBeGreaterThan(0);
    expect(group.lag).toBe(ids.length);
    expect(held.scenarios.counts.network_after_commit).toBe(0);
    expect(held.scenarios.latestFailure?.id ?? null).not.toBe('network_after_commit');

    // The consumer comes back: the backlog drains, nothing was lost.
    await startConsumer();
    const drained = await stats(
      'the backlog consumed',
      (s) =>
        s.invariants.ordersWithoutEvents === 0 &&
        s.invariants.publishedNotConsumed === 0 &&
        s.consumerGroup?.state === 'caught_up',
    );
    expect(drained.consumerGroup?.lag).toBe(0);
    expect(drained.invariants.neverPublished).toBe(0);
    expect(drained.totals.deliveries).toBe(ids.length + 1);
    expect(drained.scenarios.counts.network_after_commit).toBe(0);
  }, 300_000);

  it('naive mode, network drop after commit: never published, and the banner’s scenario', async () => {
    expect((await dash.request('/api/reset', { method: 'POST' })).status).toBe(200);
    await startConsumer();
    const api = await startService(
      { ...serviceEnv(), DEFAULT_MODE: 'naive' },
      { cwd: serviceDir('order-api'), timeoutMs: 120_000, readyPattern: /^listening/ },
    );
    services.push(api);
    expect(
      (await dash.request('/api/mode', { method: 'PUT', json: { mode: 'naive' } })).status,
    ).toBe(200);
    const armed = await dash.request('/api/failure-points/naive.network_drop_after_commit', {
      json: { mode: 'times', times: 3 },
    });
    expect(armed.status).toBe(200);
    const post = () =>
      fetch(`${api.url}/orders?mode=naive`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 1, sku: 'sku-1', quantity: 1 }),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await post()).status);
    // Two that make it: the consumer applies them, so its group is caught up.
    for (let i = 0; i < 2; i += 1) statuses.push((await post()).status);
    expect(statuses).toEqual([502, 502, 502, 201, 201]);

    await stats(
      'the lost naive orders counted',
      (s) => s.invariants.ordersWithoutEvents === 3 && s.totals.deliveries === 2,
    );
    // Told apart once the group's offsets show the events are not waiting on the topic.
    const lost = await stats(
      'never published',
      (s) => s.invariants.neverPublished === 3 && s.consumerGroup?.state === 'caught_up',
    );
    expect(lost.invariants.publishedNotConsumed).toBe(0);
    expect(lost.scenarios.counts.network_after_commit).toBe(3);
    expect(lost.consumerGroup?.lag).toBe(0);
    expect(lost.scenarios.latestFailure?.id).toBe('network_after_commit');
    expect(lost.latestAnomaly).toMatchObject({
      kind: 'order_without_event',
      scenario: 'network_after_commit',
    });
    expect(
      (await dash.request('/api/mode', { method: 'PUT', json: { mode: 'outbox' } })).status,
    ).toBe(200);
  }, 300_000);
});
