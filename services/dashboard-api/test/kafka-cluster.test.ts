import { silentLogger } from '@outbox/core';
import { createTopics, testKafka, waitFor } from '@outbox/testkit';
import { Kafka, logLevel } from 'kafkajs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KafkaClusterMonitor } from '../src/stats/kafka-cluster.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the dashboard's view of the brokers (stats.kafka)", () => {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  beforeEach(() => {
    rejections.length = 0;
    process.on('unhandledRejection', onRejection);
  });
  afterEach(() => {
    process.off('unhandledRejection', onRejection);
  });

  it("reads the topic's partitions, leaders, ISR and messages per second from the broker", async () => {
    const kafka = testKafka('kafka-cluster-test');
    const { orders } = await createTopics(kafka, ['orders']);
    const monitor = new KafkaClusterMonitor({
      kafka,
      topic: orders!,
      brokers: 1,
      intervalMs: 200,
      log: silentLogger,
    });
    monitor.start();
    const producer = kafka.producer();
    await producer.connect();
    try {
      await sleep(500);
      await producer.send({
        topic: orders!,
        messages: Array.from({ length: 30 }, () => ({ key: 'k', value: 'v', partition: 1 })),
      });
      // The next readings see partition 1's high watermark move.
      await waitFor(() => monitor.view().busiestPartition === 1, {
        timeoutMs: 15_000,
        what: `partition 1 the busiest, in ${JSON.stringify(monitor.view())}`,
      });
      const view = monitor.view();
      expect(view.reachable).toBe(true);
      expect(view.partitions.map((p) => p.partition)).toEqual([0, 1, 2]);
      expect(view.nodes).toHaveLength(1);
      expect(view.nodes[0]!.up).toBe(true);
      for (const p of view.partitions) {
        expect(p.leader).toBe(view.nodes[0]!.id);
        expect(p.isr).toEqual([view.nodes[0]!.id]);
      }
      expect(view.busiestPartition).toBe(1);
    } finally {
      await producer.disconnect();
      await monitor.stop();
    }
    expect(rejections).toEqual([]);
  });

  /**
   * Found trying `npm run demo -- --brokers 3` at 100 orders/s: "Kill the partition
   * leader" crashed dashboard-api (exit 1, an unhandled rejection of
   * KafkaJSConnectionError: read ECONNRESET). A failed reading rejected both the race
   * that handles it and the bookkeeping promise derived from it, which nobody awaited.
   */
  it('a reading that fails (the broker gone) is no unhandled rejection: the view says unreachable', async () => {
    const kafka = new Kafka({
      clientId: 'kafka-cluster-test-nowhere',
      // Nothing listens on port 1: every connection is refused.
      brokers: ['127.0.0.1:1'],
      connectionTimeout: 300,
      retry: { retries: 0 },
      logLevel: logLevel.NOTHING,
    });
    const monitor = new KafkaClusterMonitor({
      kafka,
      topic: 'nowhere',
      brokers: 3,
      intervalMs: 100,
      timeoutMs: 1_000,
      log: silentLogger,
    });
    monitor.start();
    await sleep(1_500);
    await monitor.stop();
    // Unhandled rejections are reported on the next turns of the loop.
    await sleep(100);
    expect(rejections).toEqual([]);
    expect(monitor.view().reachable).toBe(false);
  });
});
