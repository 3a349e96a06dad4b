import { join } from 'node:path';
import { findRepoRoot, startCluster, type KafkaCluster } from '@outbox/dev-stack';
import { startService, waitFor, type TestDb } from '@outbox/testkit';
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
   * Found by a fresh-clone CI run of the 3-broker lesson: the busiest partition's leader
   * was also the consumer group's coordinator. After it was SIGKILLed and started again,
   * every offset commit came back "This is not the correct coordinator for this group"
   * for 40 s and the consumer applied nothing more. The lesson's clicks, reproduced here
   * (the coordinator leads every partition, its followers frozen 3 s, SIGKILL, started
   * again 10 s later), have not made that stall happen again in this test; it guards the
   * path all the same.
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
      await waitFor(async () => (await appliedCount(fx.db)) >= 40, {
        what: 'the consumer applying events',
        timeoutMs: 90_000,
        intervalMs: 500,
      });
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
      await traffic.stop();
      log(`traffic stopped: ${traffic.sent.size} events sent`);
      await waitFor(async () => (await appliedCount(fx.db)) >= traffic.sent.size, {
        what: `all ${traffic.sent.size} events applied`,
        timeoutMs: 120_000,
        intervalMs: 1_000,
      }).catch(() => undefined);
      const applied = await appliedCount(fx.db);
      log(`${applied} of ${traffic.sent.size} applied`);
      expect(applied).toBe(traffic.sent.size);
      expect(consumer.child.exitCode).toBeNull();
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
      await waitFor(async () => (await appliedCount(fx.db)) >= 40, {
        what: 'the consumer applying events',
        timeoutMs: 90_000,
        intervalMs: 500,
      });
      const groupId = `${fx.prefix}inventory`;
      const coordinator = await coordinatorOf(admin, groupId);
      const next = coordinator === 3 ? 1 : coordinator + 1;
      // A preferred-leader election moves the coordinator while the old one stays up and
      // connected (as auto.leader.rebalance does in a real cluster).
      log(`node ${coordinator} coordinates ${groupId}: moving it to node ${next}`);
      await cluster!.leadAll('__consumer_offsets', next);
      expect(await coordinatorOf(admin, groupId)).toBe(next);
      log(
        `node ${await coordinatorOf(admin, groupId)} coordinates ${groupId}; ${await appliedCount(fx.db)} of ${traffic.sent.size} applied`,
      );
      await sleep(10_000);
      await traffic.stop();
      log(`traffic stopped: ${traffic.sent.size} events sent`);
      await waitFor(async () => (await appliedCount(fx.db)) >= traffic.sent.size, {
        what: `all ${traffic.sent.size} events applied`,
        timeoutMs: 120_000,
        intervalMs: 1_000,
      }).catch(() => undefined);
      const applied = await appliedCount(fx.db);
      log(`${applied} of ${traffic.sent.size} applied`);
      expect(applied).toBe(traffic.sent.size);
      expect(consumer.child.exitCode).toBeNull();
    } finally {
      await traffic.stop();
      await admin.disconnect();
    }
  }, 600_000);

  /**
   * Found by a fresh-clone CI run of the 3-broker lesson: the busiest partition's leader
   * was also the consumer group's coordinator. After it was SIGKILLed and started again,
   * every offset commit went to it and came back "This is not the correct coordinator
   * for this group", and the consumer applied nothing more.
   */
});
