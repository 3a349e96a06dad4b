import type { Logger } from '@outbox/core';
import type {
  Consumer,
  ConsumerConfig,
  EachBatchPayload,
  Kafka,
  TopicPartitionOffsetAndMetadata,
} from 'kafkajs';
import type { ConsumerHealth } from './health.ts';

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
 */
export class SupervisedConsumer {
  private consumer: Consumer | undefined;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private delayMs: number;

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
    await this.consumer?.disconnect();
  }

  private async launch(): Promise<void> {
    const { kafka, consumerConfig, topic, health, log } = this.options;
    const consumer = kafka.consumer(consumerConfig);
    this.consumer = consumer;
    health.watch(consumer);
    consumer.on(consumer.events.CRASH, (e) => {
      log.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed');
      if (!e.payload.restart) this.scheduleRebuild(consumer);
    });
    const onBatch = this.options.handler((offsets) => consumer.commitOffsets(offsets));
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

  private scheduleRebuild(crashed: Consumer): void {
    if (this.stopping || crashed !== this.consumer) return;
    const { health, log } = this.options;
    const delay = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, this.options.maxRestartDelayMs ?? 30_000);
    log.warn({ delayMs: delay }, 'kafkajs will not restart the consumer: rebuilding it');
    this.timer = setTimeout(() => {
      void (async () => {
        // kafkajs already disconnected it; this only makes sure nothing is left.
        await crashed.disconnect().catch(() => undefined);
        if (this.stopping) return;
        health.restarts += 1;
        try {
          await this.launch();
          this.delayMs = this.options.restartDelayMs ?? 1_000;
          log.info({ restarts: health.restarts }, 'consumer rebuilt and running');
        } catch (error) {
          log.error({ err: error }, 'could not rebuild the consumer; trying again');
          this.scheduleRebuild(this.consumer ?? crashed);
        }
      })();
    }, delay);
  }
}
