import { join } from 'node:path';
import { findRepoRoot, startCluster, type KafkaCluster } from '@outbox/dev-stack';
import { startService, waitFor, type ServiceProcess, type TestDb } from '@outbox/testkit';
import { Kafka, logLevel, type Admin, type Message, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportOnFailure } from './support/diagnostics.ts';
import { consumerEnv, orderCreated } from './support/events.ts';
import { useConsumerFixture } from './support/fixture.ts';

/** Its own cluster data dir (the demo's is .data/demo-cluster, the lesson's .data/lesson-cluster). */
const dataDir = join(findRepoRoot(), '.data', 'consumer-cluster');
const log = (line: string) => process.stdout.write(`[coordinator] ${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let cluster: KafkaCluster | undefined;
const kafka = new Kafka({
  clientId: 'coordinator-test',
  // Read when first used, after beforeAll has started the cluster.
  brokers: () => cluster?.brokers ?? [],
  logLevel: logLevel.NOTHING,
});

beforeAll(async () => {
  cluster = await startCluster({ dataDir, log });
});
afterAll(async () => {
  await cluster?.stop();
});

/** Java's String.hashCode, as Kafka hashes a group id onto __consumer_offsets. */
function javaHash(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i += 1) h = (Math.imul(31, h) + text.charCodeAt(i)) | 0;
  return h;
}

/**
 * The node coordinating `groupId`: the leader of its __consumer_offsets partition
 * (abs(hashCode) % offsets.topic.num.partitions, as the broker computes it).
 */
async function coordinatorOf(admin: Admin, groupId: string): Promise<number> {
  const { topics } = await admin.fetchTopicMetadata({ topics: ['__consumer_offsets'] });
  const partitions = topics[0]?.partitions ?? [];
  const index = (javaHash(groupId) & 0x7fffffff) % partitions.length;
  const leader = partitions.find((p) => p.partitionId === index)?.leader;
  if (leader === undefined || leader < 0) throw new Error(`no coordinator for ${groupId}`);
  return leader;
}

/** 20 events/s, each retried until the cluster takes it (a leader may be moving). */
function startTraffic(producer: Producer, topic: string) {
  const sent = new Set<string>();
  let running = true;
  const done = (async () => {
    while (running) {
      const message: Message = orderCreated({ quantity: 1 });
      let taken = false;
      while (running && !taken) {
        try {
          await producer.send({ topic, acks: -1, messages: [message] });
          taken = true;
        } catch {
          await sleep(200);
        }
      }
      // One the cluster never took is not expected (stop() ends the retries).
      if (taken) sent.add(String(message.headers?.event_id ?? ''));
      await sleep(50);
    }
  })();
  return {
    sent,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/** Waits until the consumer has applied its first 40 events. */
async function consumerApplying(db: TestDb): Promise<void> {
  await waitFor(async () => (await appliedCount(db)) >= 40, {
    what: 'the consumer applying events',
    timeoutMs: 90_000,
    intervalMs: 500,
  });
}

/** Stops the traffic and expects every event it sent applied, by a consumer still running. */
async function expectEveryEventApplied(
  db: TestDb,
  traffic: ReturnType<typeof startTraffic>,
  consumer: ServiceProcess,
): Promise<void> {
  await traffic.stop();
  log(`traffic stopped: ${traffic.sent.size} events sent`);
  await waitFor(async () => (await appliedCount(db)) >= traffic.sent.size, {
    what: `all ${traffic.sent.size} events applied`,
    timeoutMs: 120_000,
    intervalMs: 1_000,
  }).catch(() => undefined);
  const applied = await appliedCount(db);
  log(`${applied} of ${traffic.sent.size} applied`);
  expect(applied).toBe(traffic.sent.size);
  expect(consumer.child.exitCode).toBeNull();
}

/** Distinct events the consumer recorded a delivery of. */
async function appliedCount(db: TestDb): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    'SELECT count(DISTINCT event_id)::int AS n FROM consumer_deliveries',
  );
  return rows[0]!.n;
}

describe('inventory-consumer: its group coordinator dies or moves (3 brokers)', () => {
  const fx = useConsumerFixture(kafka);

  /**
   * The 3-broker lesson's clicks on the consumer alone: the coordinator leads every
   * partition, its followers are frozen 3 s, it is SIGKILLed and started again 10 s
   * later. In the lesson (a CI run; 1 local run of 2) this left the consumer committing
   * to the old coordinator for good, until supervised-consumer.ts rebuilt it on such
   * refusals. Here, with the consumer alone, that stall has not shown up in 4 runs on the
   * old code (seeded with the coordinator or not): it guards the path, it does not
   * reproduce the stall.
   */
  it('goes on applying every event after its coordinator was killed and started again', async () => {
    const admin = kafka.admin();
    await admin.connect();
    const groupId = `${fx.prefix}inventory`;
    // The consumer's seed broker is the coordinator: kafkajs picks its seed at random
    // among KAFKA_BROKERS, and the stall came when it was the node that died.
    await admin.describeGroups([groupId]);
    const coordinator = await waitFor(() => coordinatorOf(admin, groupId).catch(() => undefined), {
      what: `a coordinator for ${groupId}`,
    });
    const seed = cluster!.nodes.find((n) => n.id === coordinator)!.broker;
    const consumer = await startService(consumerEnv(fx.db, fx.prefix, { KAFKA_BROKERS: seed }));
    fx.procs.push(consumer);
    reportOnFailure(consumer);
    const traffic = startTraffic(fx.producer, fx.topic);
    try {
      await consumerApplying(fx.db);
      expect(await coordinatorOf(admin, groupId)).toBe(coordinator);
      await cluster!.leadAll(fx.topic, coordinator);
      await sleep(3_000);
      const others = [1, 2, 3].filter((id) => id !== coordinator);
      log(
        `node ${coordinator} coordinates ${groupId} and leads ${fx.topic}: freezing ${others.join(', ')}`,
      );
      for (const id of others) cluster!.pause(id);
      await sleep(3_000);
      await cluster!.kill(coordinator);
      for (const id of others) cluster!.resume(id);
      await sleep(10_000);
      await cluster!.start(coordinator);
      await cluster!.waitHealthy();
      log(
        `node ${coordinator} is back; ${await appliedCount(fx.db)} of ${traffic.sent.size} applied`,
      );
      await sleep(5_000);
      await expectEveryEventApplied(fx.db, traffic, consumer);
    } finally {
      await traffic.stop();
      await admin.disconnect();
    }
  }, 600_000);

  it('goes on applying every event when its coordinator moves to another node', async () => {
    const consumer = await startService(
      consumerEnv(fx.db, fx.prefix, { KAFKA_BROKERS: cluster!.brokers.join(',') }),
    );
    fx.procs.push(consumer);
    reportOnFailure(consumer);
    const admin = kafka.admin();
    await admin.connect();
    const traffic = startTraffic(fx.producer, fx.topic);
    try {
      await consumerApplying(fx.db);
      const groupId = `${fx.prefix}inventory`;
      const coordinator = await coordinatorOf(admin, groupId);
      const next = coordinator === 3 ? 1 : coordinator + 1;
      // A preferred-leader election moves the coordinator while the old one stays up and
      // connected (as auto.leader.rebalance does in a real cluster).
      log(`node ${coordinator} coordinates ${groupId}: moving it to node ${next}`);
      await cluster!.leadAll('__consumer_offsets', next);
      // The election is done; the brokers' metadata follows within moments.
      await waitFor(async () => (await coordinatorOf(admin, groupId)) === next, {
        what: `node ${next} coordinating ${groupId}`,
      });
      log(
        `node ${await coordinatorOf(admin, groupId)} coordinates ${groupId}; ${await appliedCount(fx.db)} of ${traffic.sent.size} applied`,
      );
      await sleep(10_000);
      await expectEveryEventApplied(fx.db, traffic, consumer);
    } finally {
      await traffic.stop();
      await admin.disconnect();
    }
  }, 600_000);
});
