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
