import { join } from 'node:path';
import { silentLogger } from '@outbox/core';
import { findRepoRoot, startCluster, type KafkaCluster } from '@outbox/dev-stack';
import { waitFor } from '@outbox/testkit';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaClusterMonitor } from '../src/stats/kafka-cluster.ts';

/** Its own cluster data dir (the demo's is .data/demo-cluster, the lesson's .data/lesson-cluster). */
const dataDir = join(findRepoRoot(), '.data', 'dashboard-cluster');
const log = (line: string) => process.stdout.write(`[kafka-panel] ${line}\n`);

let cluster: KafkaCluster;
const topic = `panel-${Date.now().toString(36)}.orders.events`;

beforeAll(async () => {
  cluster = await startCluster({ dataDir, log });
  const admin = new Kafka({
    clientId: 'kafka-panel-test',
    brokers: cluster.brokers,
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: 6, replicationFactor: 3 }],
    });
  } finally {
    await admin.disconnect();
  }
});

afterAll(async () => {
  await cluster?.stop();
});

/** The monitor as server.ts builds it: short timeouts, no retries. */
function panelMonitor(): KafkaClusterMonitor {
  return new KafkaClusterMonitor({
    kafka: new Kafka({
      clientId: 'kafka-panel-test-metadata',
      brokers: cluster.brokers,
      connectionTimeout: 1_000,
      requestTimeout: 2_000,
      retry: { retries: 0 },
      logLevel: logLevel.NOTHING,
    }),
    topic,
    brokers: 3,
    intervalMs: 500,
    log: silentLogger,
  });
}

const upNodes = (monitor: KafkaClusterMonitor) =>
  monitor
    .view()
    .nodes.filter((n) => n.up)
    .map((n) => n.id);

describe("the Kafka panel's brokers when nodes die (3 brokers)", () => {
  /**
   * Found by the landing CI of the 3-broker work: e2e kill-leader.cluster.test never saw
   * the killed leader down on the dashboard (node killed, started again 10 s later, the
   * panel showed [1, 2, 3] throughout). The monitor probed each broker's port only as
   * part of a metadata reading that succeeded; while readings failed, the panel kept the
   * brokers of the last good reading, all up. Two nodes down of three make the failing
   * readings last (no quorum: the metadata never moves on), so the view must say which
   * brokers are down from their ports alone.
   */
  it('shows a killed broker down even while the metadata cannot be read', async () => {
    const monitor = panelMonitor();
    monitor.start();
    try {
      await waitFor(() => upNodes(monitor).length === 3 && monitor.view().partitions.length === 6, {
        timeoutMs: 60_000,
        what: `3 brokers up in ${JSON.stringify(monitor.view())}`,
      });
      // The two nodes leading the most partitions: the readings need them.
      const counts = new Map<number, number>();
      for (const p of monitor.view().partitions)
        if (p.leader !== null) counts.set(p.leader, (counts.get(p.leader) ?? 0) + 1);
      const [first, second] = [...counts].sort((a, b) => b[1] - a[1]).map(([id]) => id);
      if (first === undefined || second === undefined)
        throw new Error(`fewer than two leaders in ${JSON.stringify(monitor.view())}`);
      const survivor = [1, 2, 3].find((id) => id !== first && id !== second);
      log(`killing nodes ${first} and ${second}; node ${survivor} stays`);
      await cluster.kill(first);
      await cluster.kill(second);

      // The scenario holds: the metadata cannot be read meanwhile (no quorum).
      let unreachableSeen = false;
      await waitFor(
        () => {
          unreachableSeen ||= !monitor.view().reachable;
          return unreachableSeen && upNodes(monitor).join() === String(survivor);
        },
        {
          timeoutMs: 60_000,
          what: `only node ${survivor} up in ${JSON.stringify(monitor.view())}`,
        },
      );
      log(`the view: ${JSON.stringify(monitor.view())}`);
      // The partitions are the last known, not forgotten.
      expect(monitor.view().partitions).toHaveLength(6);

      await Promise.all([cluster.start(first), cluster.start(second)]);
      await cluster.waitHealthy();
      await waitFor(() => upNodes(monitor).length === 3 && monitor.view().reachable, {
        timeoutMs: 60_000,
        what: `3 brokers up again in ${JSON.stringify(monitor.view())}`,
      });
    } finally {
      await monitor.stop();
    }
  });
});
