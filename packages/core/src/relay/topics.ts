/**
 * Maps an aggregate type to its Kafka topic: the seed's `topicFor`. A plain object
 * (`{ order: 'orders.events' }`) or a function; `undefined` means "unknown", which
 * the relay records as an error on the row rather than crashing.
 */
export type TopicMap =
  Readonly<Record<string, string>> | ((aggregateType: string) => string | undefined);

export function resolveTopic(map: TopicMap, aggregateType: string): string | undefined {
  if (typeof map === 'function') return map(aggregateType);
  return Object.hasOwn(map, aggregateType) ? map[aggregateType] : undefined;
}

/** Every topic a map names (only for object maps), to create them up front. */
export function knownTopics(map: TopicMap): string[] {
  return typeof map === 'function' ? [] : [...new Set(Object.values(map))];
}
