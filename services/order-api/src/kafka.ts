import { type Logger } from '@outbox/core';
import { FaultySocketFactory, kafkaClient } from '@outbox/lab';
import { logLevel, Partitioners, type Kafka, type Producer } from 'kafkajs';
import type { AppConfig } from './config.ts';

/**
 * The Kafka network as the naive failure point sees it: every broker socket goes
 * through the lab's FaultySocketFactory, and `duringOutage` cuts the open sockets and
 * refuses new ones while one operation runs, so kafkajs meets real socket errors.
 */
export class KafkaNetwork {
  private down = false;
  readonly sockets = new FaultySocketFactory(() => this.down);

  /** Whether new connections are refused right now. */
  get isDown(): boolean {
    return this.down;
  }

  /**
   * Runs `fn` with the network down: open connections are reset first, new ones are
   * refused until `fn` settles. Then the network is "back" for everyone.
   */
  async duringOutage<T>(fn: () => Promise<T>): Promise<T> {
    this.down = true;
    this.sockets.cut();
    try {
      return await fn();
    } finally {
      this.down = false;
    }
  }
}

const FAST_RETRY = { retries: 2, initialRetryTime: 100, maxRetryTime: 500 };

export interface KafkaParts {
  kafka: Kafka;
  producer: Producer;
  network: KafkaNetwork;
}

/**
 * The producer of the naive mode (outbox mode never produces here: the relay does).
 * Retries are few and short on purpose: a naive publish that cannot reach Kafka
 * fails within a second or so instead of holding the HTTP request for kafkajs's
 * default ~30 s of back-off, and the failure-point test relies on that.
 */
export function createKafka(
  config: Pick<AppConfig, 'KAFKA_BROKERS' | 'CHAOS_ENABLED'>,
  log: Logger,
  options: { clientId?: string; kafkaLogLevel?: logLevel } = {},
): KafkaParts {
  const network = new KafkaNetwork();
  const kafka = kafkaClient(config, options.clientId ?? 'order-api', log, {
    // Plain sockets unless chaos is on (the naive network failure point cuts these).
    ...(config.CHAOS_ENABLED ? { socketFactory: network.sockets.factory } : {}),
    logLevel: options.kafkaLogLevel ?? logLevel.WARN,
    // The client's retry governs (re)connecting to brokers; the producer's below
    // governs the produce. Both short: see above.
    retry: FAST_RETRY,
  });
  const producer = kafka.producer({
    // The Java-compatible murmur2 partitioner, as the relay's producer uses: a key
    // lands on the same partition whichever path produced it.
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
    retry: FAST_RETRY,
  });
  return { kafka, producer, network };
}
