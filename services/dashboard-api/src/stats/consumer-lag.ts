import type { Logger } from '@outbox/core';
import type { Admin, Kafka } from 'kafkajs';
import type { ConsumerGroup } from '../contract.ts';
import { GroupProgress, partitionLag, type GroupReading } from './group-progress.ts';

export interface ConsumerLagOptions {
  kafka: Kafka;
  groupId: string;
  topic: string;
  /** Lag held this long without the committed offsets moving: stalled. */
  stallMs: number;
  /** How often Kafka is asked (default 1 s). */
  intervalMs?: number;
  log: Logger;
}

const UNKNOWN_TOPIC = 'UNKNOWN_TOPIC_OR_PARTITION';

/** kafkajs wraps the broker's error in KafkaJSNumberOfRetriesExceeded (as its cause). */
function errorType(error: unknown): string | undefined {
  const e = error as { type?: string; cause?: { type?: string } };
  return e.type ?? e.cause?.type;
}

/**
 * The consumer group's lag per partition, from Kafka: the group's committed offsets
 * (admin.fetchOffsets) against the topic's high watermarks (admin.fetchTopicOffsets),
 * and its member count (describeGroups). PostgreSQL cannot tell an event that is on the
 * topic and not consumed from one that never got there; Kafka's offsets can.
 *
 * Its own loop, beside the stats tick: a Kafka that does not answer must not hold the
 * tick (which reads PostgreSQL only). The tick takes the latest reading.
 */
export class ConsumerLagMonitor {
  readonly progress: GroupProgress;
  private admin: Admin | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastError: string | null = null;
  private failures = 0;

  constructor(private readonly options: ConsumerLagOptions) {
    this.progress = new GroupProgress(options.stallMs);
  }

  /** The last good reading (undefined until one succeeded). */
  get reading(): GroupReading | undefined {
    return this.progress.reading;
  }

  start(): void {
    this.stopped = false;
    const loop = () => {
      if (this.stopped) return;
      this.running = this.poll().finally(() => {
        if (!this.stopped) this.timer = setTimeout(loop, this.options.intervalMs ?? 1_000);
      });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.admin?.disconnect().catch(() => undefined);
    this.admin = undefined;
  }

  /** Reads once now; the loop calls it, tests may too. Never throws. */
  async poll(): Promise<void> {
    try {
      this.progress.observe(await this.read());
      this.lastError = null;
      this.failures = 0;
    } catch (error) {
      this.lastError = error instanceof Error ? error.message : String(error);
      this.failures += 1;
      // Once, then every minute or so: Kafka down for a while is one story, not 60 lines.
      if (this.failures === 1 || this.failures % 60 === 0)
        this.options.log.warn(
          { err: error, groupId: this.options.groupId, topic: this.options.topic },
          'reading the consumer group offsets failed',
        );
    }
  }

  /** What the stats message carries. */
  view(now = Date.now()): ConsumerGroup {
    const reading = this.progress.reading;
    const partitions = reading?.partitions.map(partitionLag) ?? [];
    const movedAt = this.progress.movedAt;
    return {
      groupId: this.options.groupId,
      topic: this.options.topic,
      // Unreachable now: the last numbers are shown, but no verdict on them.
      state: this.lastError ? 'unknown' : this.progress.state(now),
      members: reading?.members ?? null,
      lag: partitions.reduce((sum, p) => sum + p.lag, 0),
      partitions,
      movedAt: movedAt === undefined ? null : new Date(movedAt).toISOString(),
      stallAfterSeconds: this.options.stallMs / 1000,
      readAt: reading ? new Date(reading.at).toISOString() : null,
      error: this.lastError,
    };
  }

  private async read(): Promise<GroupReading> {
    const { groupId, topic } = this.options;
    // No retries inside kafkajs: the loop is the retry, and a read must not outlast it.
    this.admin ??= this.options.kafka.admin({ retry: { retries: 0 } });
    const admin = this.admin;
    await admin.connect();
    let watermarks: Awaited<ReturnType<Admin['fetchTopicOffsets']>>;
    try {
      watermarks = await admin.fetchTopicOffsets(topic);
    } catch (error) {
      // No topic yet: nothing can be on it (the services create it at start).
      if (errorType(error) !== UNKNOWN_TOPIC) throw error;
      return { at: Date.now(), partitions: [], members: await this.members(admin) };
    }
    const [offsets, members] = await Promise.all([
      admin.fetchOffsets({ groupId, topics: [topic] }),
      this.members(admin),
    ]);
    const committed = new Map(
      (offsets.find((t) => t.topic === topic)?.partitions ?? []).map((p) => [
        p.partition,
        // kafkajs says -1 for "nothing committed".
        BigInt(p.offset) < 0n ? null : BigInt(p.offset),
      ]),
    );
    return {
      at: Date.now(),
      members,
      partitions: watermarks
        .map((w) => ({
          partition: w.partition,
          committed: committed.get(w.partition) ?? null,
          low: BigInt(w.low),
          high: BigInt(w.high),
        }))
        .sort((a, b) => a.partition - b.partition),
    };
  }

  private async members(admin: Admin): Promise<number | null> {
    const { groups } = await admin.describeGroups([this.options.groupId]);
    return groups[0]?.members.length ?? null;
  }
}
