/**
 * The consumer group's progress on the orders topic, as the stats message carries it
 * (`StatsMessage.consumerGroup`): read from Kafka, not from PostgreSQL. Imports only
 * zod, like contract.ts, which re-exports it.
 */
import { z } from 'zod';

/** bigint Kafka offsets travel as decimal strings. */
const offset = z.string().regex(/^\d+$/);

/**
 * - unknown: not read from Kafka yet, or Kafka unreachable for the dashboard
 * - caught_up: no lag on any partition
 * - behind: lag, and the group's committed offsets moved within the stall window
 * - stalled: lag, and the committed offsets have not moved for the stall window
 */
export const consumerGroupStateSchema = z.enum(['unknown', 'caught_up', 'behind', 'stalled']);
export type ConsumerGroupState = z.infer<typeof consumerGroupStateSchema>;

export const partitionLagSchema = z.object({
  partition: z.number().int(),
  /** The group's committed offset (the next message it will read); null: none committed. */
  committed: offset.nullable(),
  /** The partition's high watermark: the offset of the next message appended. */
  highWatermark: offset,
  /** Messages on the partition the group has not consumed yet. */
  lag: z.number().int(),
});
export type PartitionLag = z.infer<typeof partitionLagSchema>;

export const consumerGroupSchema = z.object({
  groupId: z.string(),
  topic: z.string(),
  state: consumerGroupStateSchema,
  /** Members in the group now (0: no consumer is running); null when unknown. */
  members: z.number().int().nullable(),
  /** Sum of the partitions' lag. */
  lag: z.number().int(),
  /** One entry per partition of the topic, by partition number (empty: no such topic yet). */
  partitions: z.array(partitionLagSchema),
  /** When the committed offsets last moved (or the lag appeared); null until first read. */
  movedAt: z.string().nullable(),
  /** Lag held this long without the committed offsets moving: stalled (CONSUMER_STALL_SECONDS). */
  stallAfterSeconds: z.number(),
  /** When these offsets were read from Kafka; null until the first read. */
  readAt: z.string().nullable(),
  /** Why the last read failed (the numbers above are then the last good ones). */
  error: z.string().nullable(),
});
export type ConsumerGroup = z.infer<typeof consumerGroupSchema>;
