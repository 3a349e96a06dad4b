/** A topic and how it is created when missing. */
export interface TopicSpec {
  topic: string;
  numPartitions: number;
  /** Omitted: the broker's `default.replication.factor` (the dev-stack cluster sets it). */
  replicationFactor?: number;
  /** Topic configs set at creation (kafkajs createTopics' configEntries). */
  configEntries?: { name: string; value: string }[];
}

/**
 * How many brokers the demo runs on: 1 (the dev-stack's broker) or 3 (`npm run demo --
 * --brokers 3`). On 3 the demo's topics get replication factor 3 and
 * min.insync.replicas 2: an acks = all write is on two brokers before it is
 * acknowledged, so one broker may die without losing it (the 3-broker lesson).
 */
export function replicationFor(
  brokers: number,
): Pick<TopicSpec, 'replicationFactor' | 'configEntries'> {
  if (brokers < 3) return {};
  return {
    replicationFactor: 3,
    configEntries: [
      { name: 'min.insync.replicas', value: '2' },
      { name: 'unclean.leader.election.enable', value: 'false' },
    ],
  };
}

/**
 * The demo's topics and their partition counts, the one definition every service (and
 * the tests) creates them from: whichever service starts first wins, so they must agree.
 * orders.events: 6 partitions, room for up to 6 consumers of the group in parallel (FIFO
 * holds per key whatever the count, but the count must not change once keys are on it:
 * adding partitions moves keys). Its dead-letter topic: 1, read by an operator.
 */
export function demoTopicSpecs(
  prefix = '',
  brokers = 1,
): { orders: TopicSpec; deadLetter: TopicSpec } {
  const names = demoTopics(prefix);
  return {
    orders: { topic: names.orders, numPartitions: 6, ...replicationFor(brokers) },
    deadLetter: { topic: names.deadLetter, numPartitions: 1, ...replicationFor(brokers) },
  };
}

/** The demo's topics: the seed's `orders.events`, and the consumer's dead-letter topic. */
export function demoTopics(prefix = ''): { orders: string; deadLetter: string } {
  return { orders: `${prefix}orders.events`, deadLetter: `${prefix}orders.events.dlq` };
}
