import { Kafka, logLevel, type KafkaConfig, type LogEntry } from 'kafkajs';
import type { Logger } from '../logger.ts';

const levels: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/** kafkajs logs into our pino logger instead of its own console format. */
export function pinoLogCreator(log: Logger): NonNullable<KafkaConfig['logCreator']> {
  return () =>
    ({ level, log: entry }: LogEntry) => {
      const { message, ...rest } = entry;
      log[levels[level] ?? 'info'](rest, message);
    };
}

/**
 * A service's kafkajs client: short connect and request timeouts, WARN and above
 * logged through pino (component "kafkajs"). `overrides` carries what differs per
 * service: the socket factory a failure point cuts, and `retry`. Note that kafkajs
 * (re)connects to brokers with the *client's* retry settings, not the producer's: a
 * service that wants a produce to fail fast must shorten both.
 */
export function kafkaClient(
  config: { KAFKA_BROKERS: string[] },
  clientId: string,
  log: Logger,
  overrides: Partial<Omit<KafkaConfig, 'brokers' | 'clientId' | 'logCreator'>> = {},
): Kafka {
  return new Kafka({
    clientId,
    brokers: config.KAFKA_BROKERS,
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    logLevel: logLevel.WARN,
    logCreator: pinoLogCreator(log.child({ component: 'kafkajs' })),
    ...overrides,
  });
}

/**
 * Creates the topic if it is missing. Idempotent: several replicas (or services) may
 * race, and the loser's "already exists" is not an error.
 */
export async function ensureTopic(
  kafka: Kafka,
  topic: string,
  numPartitions: number,
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions }] });
  } catch (error) {
    // Another process created it between our metadata read and our request.
    if ((error as { type?: string }).type !== 'TOPIC_ALREADY_EXISTS') throw error;
  } finally {
    await admin.disconnect();
  }
}
