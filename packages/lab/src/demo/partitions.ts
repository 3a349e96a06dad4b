import type { Admin } from 'kafkajs';

/** One partition of a topic as the cluster's metadata and offsets show it. */
export interface PartitionState {
  partition: number;
  /** node.id of the leader; null while it has none. */
  leader: number | null;
  replicas: number[];
  isr: number[];
  /** The high watermark (the next offset a consumer can read), null when unread. */
  high: number | null;
}

/**
 * Leaders, replicas, ISR and high watermarks of `topic`'s partitions: one metadata
 * request and one ListOffsets per leader. Throws when a leader does not answer (a
 * SIGSTOPped broker: the client's request timeout bounds it).
 */
export async function readPartitions(admin: Admin, topic: string): Promise<PartitionState[]> {
  const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
  const partitions = topics[0]?.partitions ?? [];
  const offsets = await admin.fetchTopicOffsets(topic).catch(() => []);
  const highOf = new Map(offsets.map((o) => [o.partition, Number(o.high)]));
  return partitions
    .map((p) => ({
      partition: p.partitionId,
      leader: p.leader >= 0 ? p.leader : null,
      replicas: [...p.replicas],
      isr: [...p.isr],
      high: highOf.get(p.partitionId) ?? null,
    }))
    .sort((a, b) => a.partition - b.partition);
}

/**
 * Messages per second per partition between two readings (high-watermark deltas; a
 * watermark that went back, after a truncation, counts as 0).
 */
export function partitionRates(
  before: PartitionState[],
  after: PartitionState[],
  seconds: number,
): Map<number, number> {
  const old = new Map(before.map((p) => [p.partition, p.high]));
  return new Map(
    after.map((p) => {
      const was = old.get(p.partition);
      const delta = p.high !== null && was != null ? Math.max(0, p.high - was) : 0;
      return [p.partition, seconds > 0 ? delta / seconds : 0];
    }),
  );
}

/** The partition with the most messages per second; none moving: the fullest one (null: none). */
export function busiestPartition(
  rates: Map<number, number>,
  partitions: PartitionState[],
): number | null {
  let best: number | null = null;
  let bestRate = 0;
  for (const [partition, rate] of rates) if (rate > bestRate) [best, bestRate] = [partition, rate];
  if (best !== null) return best;
  let fullest: PartitionState | undefined;
  for (const p of partitions) if (!fullest || (p.high ?? 0) > (fullest.high ?? 0)) fullest = p;
  return fullest?.partition ?? null;
}
