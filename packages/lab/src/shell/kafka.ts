import { readFileSync } from 'node:fs';
import {
  Kafka,
  logLevel,
  type Admin,
  type KafkaConfig,
  type LogEntry,
  type SASLOptions,
} from 'kafkajs';
import type { TopicSpec } from '../demo/topics.ts';
import type { Logger } from '@outbox/core';
import { routeSockets, type KafkaRoutes } from '../chaos/kafka-routes.ts';

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

/** The Kafka connection settings of a service's config (the security ones are optional). */
export interface KafkaConnectionConfig {
  KAFKA_BROKERS: string[];
  KAFKA_SSL?: 'true' | 'false';
  KAFKA_SSL_CA_FILE?: string | undefined;
  KAFKA_SASL_MECHANISM?: 'plain' | 'scram-sha-256' | 'scram-sha-512' | undefined;
  KAFKA_SASL_USERNAME?: string | undefined;
  KAFKA_SASL_PASSWORD?: string | undefined;
  /** Lab only: broker address → fault proxy address (KAFKA_ROUTES). */
  KAFKA_ROUTES?: KafkaRoutes | undefined;
}

/**
 * kafkajs' `ssl` and `sasl` options from the configuration, so that a managed Kafka
 * (TLS, SASL/SCRAM) is a matter of environment variables. Throws a message naming the
 * variables when the SASL settings are incomplete, or the CA file cannot be read.
 */
export function kafkaSecurity(config: KafkaConnectionConfig): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const security: Pick<KafkaConfig, 'ssl' | 'sasl'> = {};
  if (config.KAFKA_SSL === 'true') {
    security.ssl = config.KAFKA_SSL_CA_FILE
      ? { ca: [readFileSync(config.KAFKA_SSL_CA_FILE, 'utf8')] }
      : true;
  } else if (config.KAFKA_SSL_CA_FILE) {
    throw new Error('KAFKA_SSL_CA_FILE is set but KAFKA_SSL is not true');
  }
  const { KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: username } = config;
  const password = config.KAFKA_SASL_PASSWORD;
  if (mechanism) {
    if (!username || !password)
      throw new Error(
        `KAFKA_SASL_MECHANISM=${mechanism} needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD`,
      );
    security.sasl = { mechanism, username, password } as SASLOptions;
  } else if (username || password) {
    throw new Error('KAFKA_SASL_USERNAME/PASSWORD are set but KAFKA_SASL_MECHANISM is not');
  }
  return security;
}

/**
 * A service's kafkajs client: short connect and request timeouts, WARN and above
 * logged through pino (component "kafkajs"). `overrides` carries what differs per
 * service: the socket factory a failure point cuts, and `retry`. Note that kafkajs
 * (re)connects to brokers with the *client's* retry settings, not the producer's: a
 * service that wants a produce to fail fast must shorten both.
 */
export function kafkaClient(
  config: KafkaConnectionConfig,
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
    ...kafkaSecurity(config),
    ...overrides,
    ...(config.KAFKA_ROUTES?.size
      ? { socketFactory: routeSockets(config.KAFKA_ROUTES, overrides.socketFactory) }
      : {}),
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
  await ensureTopics(kafka, [{ topic, numPartitions }]);
}

/** Until every partition of `topics` has a leader in the metadata (at most `timeoutMs`). */
async function waitForLeaders(admin: Admin, topics: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const metadata = await admin.fetchTopicMetadata({ topics });
      const ready = metadata.topics.every(
        (t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0),
      );
      if (ready && metadata.topics.length === topics.length) return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline)
      throw new Error(`no leaders for ${topics.join(', ')} in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Creates the topics that are missing, as specified (demo: `demoTopicSpecs`). Idempotent
 * and safe to race: a topic another process created in between is not an error. An
 * existing topic is left as it is; when its partition count differs from the spec, `log`
 * hears of it (growing it would move keys to other partitions and break FIFO per key).
 */
export async function ensureTopics(kafka: Kafka, specs: TopicSpec[], log?: Logger): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = specs.filter((s) => !existing.has(s.topic));
    if (missing.length > 0) {
      try {
        await admin.createTopics({ waitForLeaders: true, topics: missing });
      } catch (error) {
        const type = (error as { type?: string }).type;
        // Another process created one between our listing and our request.
        if (type === 'TOPIC_ALREADY_EXISTS') {
          // nothing to do
        } else if (type === 'UNKNOWN_TOPIC_OR_PARTITION') {
          // Created, but the broker's metadata did not list it yet when kafkajs waited
          // for its leaders (it retries LEADER_NOT_AVAILABLE only): seen in CI with
          // three creators racing on a loaded machine. Wait for the leaders ourselves.
          await waitForLeaders(
            admin,
            missing.map((s) => s.topic),
          );
        } else throw error;
      }
    }
    const present = specs.filter((s) => existing.has(s.topic));
    if (log && present.length > 0) {
      const { topics } = await admin.fetchTopicMetadata({ topics: present.map((s) => s.topic) });
      for (const spec of present) {
        const partitions = topics.find((t) => t.name === spec.topic)?.partitions.length;
        if (partitions !== undefined && partitions !== spec.numPartitions)
          log.warn(
            { topic: spec.topic, partitions, expected: spec.numPartitions },
            'topic exists with another partition count than its spec; left as it is',
          );
      }
    }
  } finally {
    await admin.disconnect();
  }
}
