import {
  closeServer,
  createLogger,
  createOpsServer,
  createPool,
  demoTopics,
  demoTopicSpecs,
  ensureTopics,
  exitOnStartupSignal,
  FailurePoints,
  listenOrExit,
  maskUrl,
  migrate,
  onShutdown,
  pgConfig,
} from '@outbox/core';
import { loadConfig } from './config.ts';
import { createDeadLetterProducer, createKafka } from './kafka.ts';
import { ConsumerMetrics } from './metrics.ts';
import { createOnMessage } from './on-message.ts';

/**
 * inventory-consumer: reads orders.events in a consumer group and applies each event
 * to the inventory exactly once through the inbox. SIGTERM/SIGINT: the message in
 * flight finishes (consumer.disconnect waits for it), then the pool closes; a second
 * signal exits at once.
 */
const config = loadConfig(process.env);
const log = createLogger('inventory-consumer', config.LOG_LEVEL).child({
  consumer: config.CONSUMER_NAME,
});
const topics = demoTopics(config.TOPIC_PREFIX);
let joined = false;
// False until the shutdown below is armed: before that a signal exits at once.
let stopping = (): boolean => false;

// Until `onShutdown` below, a signal exits at once (nothing is in flight yet).
const disarmStartupSignal = exitOnStartupSignal(log);

const pool = createPool(config, log, { max: 5, watchCheckedOut: true });
await migrate(pool);
const failurePoints = new FailurePoints(pool, { listen: pgConfig(config), log });
await failurePoints.start();

const kafka = createKafka(config, log);
await ensureTopics(kafka, Object.values(demoTopicSpecs(config.TOPIC_PREFIX)), log).catch(
  (error: unknown) => log.warn({ err: error }, 'could not create the topics'),
);
const producer = createDeadLetterProducer(kafka);
await producer.connect();
const consumer = kafka.consumer({
  groupId: config.GROUP_ID,
  // Short session: a consumer killed by a failure point is replaced within ~10 s
  // instead of the 30 s default, and its partitions are handed over sooner.
  sessionTimeout: 10_000,
  rebalanceTimeout: 10_000,
  heartbeatInterval: 1_000,
});
await consumer.connect();
await consumer.subscribe({ topic: topics.orders, fromBeginning: true });

const metrics = new ConsumerMetrics();
metrics.initReasons([
  'missing_event_id',
  'invalid_json',
  'unknown_event_type',
  'invalid_payload',
  'handler_error',
]);
const server = createOpsServer(metrics.registry, () => ({
  ok: !stopping() && joined,
  consumer: config.CONSUMER_NAME,
  groupId: config.GROUP_ID,
  joined,
}));
const port = await new Promise<number>((resolve) =>
  listenOrExit(server, { host: config.HOST, port: config.PORT }, log, resolve),
);

// Ready once the group gave us partitions: before that, nothing is consumed.
consumer.on(consumer.events.GROUP_JOIN, (e) => {
  const first = !joined;
  joined = true;
  const summary = {
    host: config.HOST,
    port,
    groupId: config.GROUP_ID,
    topic: topics.orders,
    database: maskUrl(config.DATABASE_URL),
    schema: config.DATABASE_SCHEMA,
    assignment: e.payload.memberAssignment,
  };
  if (first) log.info(summary, `inventory-consumer ready on ${config.HOST}:${port}`);
  else log.info(summary, 'consumer group rebalanced');
});
consumer.on(consumer.events.CRASH, (e) =>
  log.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed'),
);

await consumer.run({
  autoCommit: false,
  eachMessage: createOnMessage({
    pool,
    consumer,
    producer,
    failurePoints,
    metrics,
    log,
    consumerName: config.CONSUMER_NAME,
    dlqTopic: topics.deadLetter,
  }),
});

disarmStartupSignal();
const shutdown = onShutdown(log, {
  message: 'stopping: finishing the message in flight',
  timeoutMs: 30_000,
  timeoutMessage: 'shutdown did not finish in 30 s; exiting',
  steps: [
    () =>
      consumer
        .disconnect()
        .catch((error: unknown) => log.warn({ err: error }, 'consumer disconnect failed')),
    () =>
      producer
        .disconnect()
        .catch((error: unknown) => log.warn({ err: error }, 'producer disconnect failed')),
    () => failurePoints.stop(),
    () => closeServer(server, 'all'),
    () => pool.end(),
  ],
});
stopping = () => shutdown.stopping;
