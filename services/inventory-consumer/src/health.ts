import type { Logger } from '@outbox/core';
import type { Admin, Consumer, ConsumerGroupJoinEvent } from 'kafkajs';

/** What the kafkajs consumer is doing, as its instrumentation events tell it. */
export type ConsumerState = 'starting' | 'running' | 'restarting' | 'stopped';

/** The group's lag on the topic, read from Kafka (committed offsets vs. high watermarks). */
export interface GroupLag {
  total: number;
  byPartition: Record<number, number>;
  at: number;
}

export interface HealthOptions {
  groupId: string;
  topic: string;
  /** Lag and no progress (or no fetch) for longer than this is a stall. */
  stallMs: number;
  /** How often the group's lag is read from Kafka. */
  probeMs: number;
  log: Logger;
  now?: () => number;
}

/**
 * The consumer's observable state, for a /healthz that tells the truth (issue 10: a
 * consumer crashed inside the process went on answering ok:true joined:true while
 * 20,706 events waited). Healthy means: the kafkajs consumer runs, is in the group, and
 * either the group has no lag or the consumer made progress (applied a message) within
 * `stallMs`. Lag is Kafka's own view, so a consumer that stopped without knowing it is
 * seen too. When the lag cannot be read, a consumer that has not fetched within
 * `stallMs` counts as stalled.
 */
export class ConsumerHealth {
  state: ConsumerState = 'starting';
  joined = false;
  restarts = 0;
  lastCrash: { at: number; error: string; restartedByKafkajs: boolean } | undefined;
  private lastFetchAt: number | undefined;
  private lastProgressAt: number | undefined;
  /** When the lag last went from 0 (or unknown) to positive. */
  private lagSince: number | undefined;
  private lag: GroupLag | undefined;
  private lagError: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private readonly joinListeners: ((e: ConsumerGroupJoinEvent) => void)[] = [];

  constructor(
    private readonly admin: Admin,
    private readonly options: HealthOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Follows one kafkajs consumer's events (each restart builds a new consumer). Returns
   * what stops following it: a consumer being replaced must not speak for its successor.
   */
  watch(consumer: Consumer): () => void {
    const { events } = consumer;
    const removers = [
      consumer.on(events.GROUP_JOIN, (e) => {
        this.joined = true;
        this.state = 'running';
        for (const listener of this.joinListeners) listener(e);
      }),
      consumer.on(events.REBALANCING, () => {
        this.joined = false;
      }),
      consumer.on(events.FETCH_START, () => {
        this.lastFetchAt ??= this.now();
      }),
      consumer.on(events.FETCH, () => {
        this.lastFetchAt = this.now();
      }),
      consumer.on(events.CRASH, (e) => {
        this.joined = false;
        this.state = 'restarting';
        this.lastCrash = {
          at: this.now(),
          error: String((e.payload.error as Error | undefined)?.message ?? e.payload.error),
          restartedByKafkajs: e.payload.restart,
        };
      }),
      consumer.on(events.STOP, () => {
        this.joined = false;
        if (this.state !== 'restarting') this.state = 'stopped';
      }),
    ];
    return () => {
      for (const remove of removers) remove();
    };
  }

  /** Called on every group join of every consumer watched (the ready line, rebalances). */
  onJoin(listener: (e: ConsumerGroupJoinEvent) => void): void {
    this.joinListeners.push(listener);
  }

  /** A message was handled and its offset committed. */
  progressed(): void {
    this.lastProgressAt = this.now();
  }

  /** Starts reading the group's lag every `probeMs`. */
  async start(): Promise<void> {
    await this.admin.connect();
    await this.probe();
    this.timer = setInterval(() => void this.probe(), this.options.probeMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.state = 'stopped';
    await this.admin.disconnect().catch(() => undefined);
  }

  /** Reads committed offsets and high watermarks from Kafka. Never throws. */
  async probe(): Promise<void> {
    const { groupId, topic } = this.options;
    try {
      const [committed, ends] = await Promise.all([
        this.admin.fetchOffsets({ groupId, topics: [topic] }),
        this.admin.fetchTopicOffsets(topic),
      ]);
      const done = new Map(
        (committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]),
      );
      const byPartition: Record<number, number> = {};
      let total = 0;
      for (const p of ends) {
        // -1: nothing committed yet; the group starts from the beginning (the low offset).
        const from = Math.max(done.get(p.partition) ?? -1, Number(p.low));
        const lag = Math.max(0, Number(p.high) - from);
        byPartition[p.partition] = lag;
        total += lag;
      }
      const at = this.now();
      if (total > 0 && !(this.lag && this.lag.total > 0)) this.lagSince = at;
      this.lag = { total, byPartition, at };
      this.lagError = undefined;
    } catch (error) {
      this.lag = undefined;
      this.lagError = error instanceof Error ? error.message : String(error);
      this.options.log.debug({ err: error }, 'could not read the group lag');
    }
  }

  /** The body of /healthz; `ok` false answers 503. */
  report(): Record<string, unknown> & { ok: boolean } {
    const now = this.now();
    const ago = (t: number | undefined) => (t === undefined ? null : now - t);
    const { stallMs } = this.options;
    let stalled: string | null = null;
    if (this.lag) {
      if (this.lag.total > 0) {
        const since = Math.max(this.lastProgressAt ?? 0, this.lagSince ?? 0);
        if (now - since > stallMs)
          stalled = `lag ${this.lag.total} and no progress for ${now - since} ms`;
      }
    } else {
      const since = this.lastFetchAt ?? 0;
      if (now - since > stallMs) stalled = `group lag unknown and no fetch for ${now - since} ms`;
    }
    const reasons = [
      this.state !== 'running' ? `consumer ${this.state}` : null,
      this.state === 'running' && !this.joined ? 'not in the group' : null,
      stalled,
    ].filter((r): r is string => r !== null);
    return {
      ok: reasons.length === 0,
      ...(reasons.length > 0 ? { reasons } : {}),
      state: this.state,
      joined: this.joined,
      lag: this.lag ? { total: this.lag.total, byPartition: this.lag.byPartition } : null,
      ...(this.lagError ? { lagError: this.lagError } : {}),
      lastFetchAgoMs: ago(this.lastFetchAt),
      lastProgressAgoMs: ago(this.lastProgressAt),
      restarts: this.restarts,
      ...(this.lastCrash
        ? { lastCrash: { ...this.lastCrash, agoMs: now - this.lastCrash.at } }
        : {}),
    };
  }
}
