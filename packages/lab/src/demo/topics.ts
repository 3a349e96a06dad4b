/** A topic and how it is created when missing. */
export interface TopicSpec {
  topic: string;
  numPartitions: number;
  /** Omitted: the broker's `default.replication.factor` (the dev-stack cluster sets it). */
  replicationFactor?: number;
}

/**
 * The demo's topics and their partition counts, the one definition every service (and
 * the tests) creates them from: whichever service starts first wins, so they must agree.
 * orders.events: 6 partitions, room for up to 6 consumers of the group in parallel (FIFO
 * holds per key whatever the count, but the count must not change once keys are on it:
 * adding partitions moves keys). Its dead-letter topic: 1, read by an operator.
 */
export function demoTopicSpecs(prefix = ''): { orders: TopicSpec; deadLetter: TopicSpec } {
  const names = demoTopics(prefix);
  return {
    orders: { topic: names.orders, numPartitions: 6 },
    deadLetter: { topic: names.deadLetter, numPartitions: 1 },
  };
}

/** The demo's topics: the seed's `orders.events`, and the consumer's dead-letter topic. */
export function demoTopics(prefix = ''): { orders: string; deadLetter: string } {
  return { orders: `${prefix}orders.events`, deadLetter: `${prefix}orders.events.dlq` };
}
