import type { Logger } from '@outbox/core';
import type {
  Consumer,
  ConsumerConfig,
  EachBatchPayload,
  Kafka,
  TopicPartitionOffsetAndMetadata,
} from 'kafkajs';
import type { ConsumerHealth } from './health.ts';
import { rejoinCause } from './on-batch.ts';

export interface SupervisedConsumerOptions {
  kafka: Kafka;
  consumerConfig: ConsumerConfig;
  topic: string;
  /**
   * The eachBatch handler, given how to commit through the consumer now running. It
   * resolves the offsets it has handled itself (eachBatchAutoResolve is off: a batch cut
   * short by a shutdown or a rebalance must not count as handled).
   */
  handler: (
    commitOffsets: (offsets: TopicPartitionOffsetAndMetadata[]) => Promise<void>,
  ) => (payload: EachBatchPayload) => Promise<void>;
  health: ConsumerHealth;
  log: Logger;
  /**
   * Offset commits refused with NOT_COORDINATOR, one after another, before the consumer
   * is rebuilt (default 2: the first is left to kafkajs' rejoin, which usually mends it).
   */
  coordinatorRefusalsBeforeRebuild?: number;
  /** First delay before a rebuild; doubles on each failed one, up to `maxRestartDelayMs`. */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
}

/**
 * The kafkajs consumer, rebuilt when it crashes in a way kafkajs will not restart
 * itself (CRASH with restart false: a non-retriable error, such as an offset commit
 * refused after the member was expelled). The rebuild happens in the process, not by
 * exiting: the pool, the dead-letter producer, the failure points and the metrics are
 * healthy and stay; it takes about a second, where a process restart re-runs tsx and
 * the migrations; and it works under any supervisor or none. A rebuild that fails (the
 * broker unreachable) is tried again with backoff, while /healthz says "restarting".
 *
 * It is also rebuilt, alive, when its offset commits keep going to a broker that is no
 * longer the group's coordinator. Found in the 3-broker lesson (a CI run, and 1 local run
 * of 2): the coordinator was SIGKILLed and started again; the consumer rejoined at the
 * new coordinator, yet every later commit went to the old one and came back "This is not
 * the correct coordinator for this group", through kafkajs' retries and its rejoins,
 * until that node became coordinator again by chance; nothing was applied meanwhile.
 * kafkajs 2.2.4 keeps the coordinator in its consumer's state; a new consumer (its own
 * broker pool) looks it up afresh.
 */
export class SupervisedConsumer {
  private consumer: Consumer | undefined;
  /** Stops the health object following the current consumer's events. */
  private unwatch: (() => void) | undefined;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  /** Ends a rebuild's wait at once (stop() during it). */
  private wake: (() => void) | undefined;
  private delayMs: number;
  /** The rebuild under way (timer set, or the old consumer leaving, or the new starting). */
  private rebuilding: Promise<void> | undefined;

  constructor(private readonly options: SupervisedConsumerOptions) {
    this.delayMs = options.restartDelayMs ?? 1_000;
  }

  /** Connects, subscribes and runs the first consumer; throws if that fails. */
  async start(): Promise<void> {
    await this.launch();
  }

  /** Leaves the group (waiting for the chunk in flight) and stops rebuilding. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    this.wake?.();
    await this.rebuilding;
    await this.consumer?.disconnect();
  }

  private async launch(): Promise<void> {
    const { kafka, consumerConfig, topic, health, log } = this.options;
    const consumer = kafka.consumer(consumerConfig);
    this.consumer = consumer;
    this.unwatch = health.watch(consumer);
    consumer.on(consumer.events.CRASH, (e) => {
      log.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed');
      if (!e.payload.restart) this.scheduleRebuild(consumer);
    });
    let coordinatorRefusals = 0;
    const onBatch = this.options.handler(async (offsets) => {
      try {
        await consumer.commitOffsets(offsets);
        coordinatorRefusals = 0;
      } catch (error) {
        if (
          consumer === this.consumer &&
          rejoinCause(error)?.type === 'NOT_COORDINATOR_FOR_GROUP' &&
          ++coordinatorRefusals >= (this.options.coordinatorRefusalsBeforeRebuild ?? 2)
        ) {
          log.warn(
            { refusals: coordinatorRefusals },
            'offset commits keep going to a broker that is not the coordinator: rebuilding the consumer',
          );
          coordinatorRefusals = 0;
          this.scheduleRebuild(consumer);
        }
        throw error;
      }
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async (payload) => {
        await onBatch(payload);
        health.progressed();
      },
    });
  }

  /** Replaces `old` (crashed, or alive with a stale coordinator) with a new consumer. */
  private scheduleRebuild(old: Consumer): void {
    if (this.stopping || old !== this.consumer || this.rebuilding) return;
    const { health, log } = this.options;
    // From now on the old consumer's events (its STOP, a late join) say nothing.
    this.unwatch?.();
    health.state = 'restarting';
    const delay = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, this.options.maxRestartDelayMs ?? 30_000);
    log.warn({ delayMs: delay }, 'rebuilding the kafkajs consumer');
    this.rebuilding = new Promise<void>((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, delay);
    }).then(async () => {
      // A crashed one kafkajs already disconnected: this only makes sure nothing is
      // left. A live one leaves the group, bounded: its runner may be retrying a join.
      await Promise.race([
        old.disconnect().catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, 10_000).unref()),
      ]);
      if (this.stopping) return;
      health.restarts += 1;
      try {
        await this.launch();
        this.delayMs = this.options.restartDelayMs ?? 1_000;
        log.info({ restarts: health.restarts }, 'consumer rebuilt and running');
      } catch (error) {
        log.error({ err: error }, 'could not rebuild the consumer; trying again');
        this.rebuilding = undefined;
        this.scheduleRebuild(this.consumer ?? old);
        return;
      }
      this.rebuilding = undefined;
    });
  }
}
