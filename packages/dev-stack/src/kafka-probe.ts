import { Kafka, logLevel } from 'kafkajs';

const PROBE_TOPIC = '__dev_stack_probe';

/**
 * Checks that a broker is usable, not just listening: metadata answers, a topic can be
 * created (controller works) and, with `full`, the group coordinator is available (consumer
 * groups work). Resolves true or throws the failure.
 */
export async function probeKafka(brokers: string[], full = true): Promise<true> {
  const kafka = new Kafka({
    clientId: 'dev-stack-probe',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2000,
    requestTimeout: 5000,
    retry: { retries: 1, initialRetryTime: 200 },
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const cluster = await admin.describeCluster();
    if (cluster.brokers.length === 0) throw new Error('no brokers in metadata');
    if (!full) return true;
    const topics = await admin.listTopics();
    if (!topics.includes(PROBE_TOPIC)) {
      await admin.createTopics({
        topics: [{ topic: PROBE_TOPIC, numPartitions: 1, replicationFactor: 1 }],
        waitForLeaders: true,
      });
    }
    // describeGroups goes through FindCoordinator, which fails until __consumer_offsets is up.
    await admin.describeGroups(['dev-stack-probe']);
    return true;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
