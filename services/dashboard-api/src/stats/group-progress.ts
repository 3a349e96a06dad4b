import type { ConsumerGroupState, PartitionLag } from '../contract.ts';

/** One partition as read from Kafka: the group's committed offset and the topic's watermarks. */
export interface PartitionOffsets {
  partition: number;
  /** null: the group has committed nothing for it. */
  committed: bigint | null;
  low: bigint;
  high: bigint;
}

/** One read of the group's offsets on the topic. */
export interface GroupReading {
  /** Date.now() when the read finished. */
  at: number;
  /** By partition number; empty when the topic does not exist (nothing can be on it). */
  partitions: PartitionOffsets[];
  members: number | null;
}

/**
 * Where the group will read next on a partition. Without a committed offset,
 * inventory-consumer starts from the beginning (fromBeginning), so: the low watermark.
 * A committed offset below it (retention deleted what it had not read) counts as it.
 */
export function nextRead(p: PartitionOffsets): bigint {
  return p.committed === null || p.committed < p.low ? p.low : p.committed;
}

export function partitionLag(p: PartitionOffsets): PartitionLag {
  const lag = p.high > nextRead(p) ? p.high - nextRead(p) : 0n;
  return {
    partition: p.partition,
    committed: p.committed === null ? null : p.committed.toString(),
    highWatermark: p.high.toString(),
    lag: Number(lag),
  };
}

const sameCommitted = (a: GroupReading, b: GroupReading): boolean =>
  a.partitions.length === b.partitions.length &&
  a.partitions.every((p, i) => p.committed === b.partitions[i]?.committed);

/**
 * Whether the group moves: "stalled" is lag that the committed offsets have not
 * reduced for `stallMs`. A consumer that died inside its process (kafkajs crashed, the
 * process stayed up) or that is not running at all looks the same from Kafka, and that
 * is the point: events wait on the topic, they are not lost. Pure: fed with readings.
 */
export class GroupProgress {
  private last: GroupReading | undefined;
  private moved: number | undefined;

  constructor(readonly stallMs: number) {}

  get reading(): GroupReading | undefined {
    return this.last;
  }

  /** When the committed offsets last moved (or the lag appeared). */
  get movedAt(): number | undefined {
    return this.moved;
  }

  observe(reading: GroupReading): void {
    // The clock starts at the first reading (how long it had stood before is unknown),
    // and again whenever the offsets move or the lag appears after none.
    if (!this.last || !sameCommitted(this.last, reading) || totalLag(this.last) === 0)
      this.moved = reading.at;
    this.last = reading;
  }

  /** Forgets everything (a reset of the demo's data). */
  clear(): void {
    this.last = undefined;
    this.moved = undefined;
  }

  state(now: number): ConsumerGroupState {
    if (!this.last || this.moved === undefined) return 'unknown';
    if (totalLag(this.last) === 0) return 'caught_up';
    return now - this.moved >= this.stallMs ? 'stalled' : 'behind';
  }
}

export function totalLag(reading: GroupReading): number {
  return reading.partitions.reduce((sum, p) => sum + partitionLag(p).lag, 0);
}
