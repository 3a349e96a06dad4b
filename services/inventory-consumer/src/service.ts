import { createLogger, createPool, pgConfig } from '@outbox/core';
import {
  closeServer,
  createOpsServer,
  demoTopics,
  demoTopicSpecs,
  ensureTopics,
  exitOnStartupSignal,
  failurePointGate,
  listenOrExit,
  maskUrl,
  onShutdown,
  migrateLab,
} from '@outbox/lab';
import type { ConsumerGroupJoinEvent } from 'kafkajs';
import { loadConfig } from './config.ts';
import { ConsumerHealth } from './health.ts';
import { createDeadLetterProducer, createKafka } from './kafka.ts';
import { ConsumerMetrics } from './metrics.ts';
import { createOnBatch } from './on-batch.ts';
import { SupervisedConsumer } from './supervised-consumer.ts';

/**
 * inventory-consumer: reads orders.events in a consumer group and applies each event
 * to the inventory exactly once through the inbox. The kafkajs consumer is rebuilt when
 * it crashes for good, and /healthz reports a stall (lag, no progress) as unhealthy.
 * SIGTERM/SIGINT: the chunk in flight finishes (consumer.disconnect waits for it),
 * then the pool closes; a second signal exits at once.
 */
const config = loadConfig(process.env);
const log = createLogger('inventory-consumer', config.LOG_LEVEL).child({
  consumer: config.CONSUMER_NAME,
});
const topics = demoTopics(config.TOPIC_PREFIX);
// False until the shutdown below is armed: before that a signal exits at once.
let stopping = (): boolean => false;

// Until `onShutdown` below, a signal exits at once (nothing is in flight yet).
const disarmStartupSignal = exitOnStartupSignal(log);

const pool = createPool(config, log, { max: 5, watchCheckedOut: true });
await migrateLab(pool);
const failurePoints = failurePointGate(config.CHAOS_ENABLED, pool, {
  listen: pgConfig(config),
  log,
});
await failurePoints.start();

const kafka = createKafka(config, log);
await ensureTopics(kafka, Object.values(demoTopicSpecs(config.TOPIC_PREFIX)), log).catch(
  (error: unknown) => log.warn({ err: error }, 'could not create the topics'),
);
const producer = createDeadLetterProducer(kafka);
await producer.connect();
const metrics = new ConsumerMetrics();
metrics.initReasons([
  'missing_event_id',
  'invalid_json',
  'unknown_event_type',
  'invalid_payload',
  'handler_error',
]);
const health = new ConsumerHealth(kafka.admin(), {
  groupId: config.GROUP_ID,
  topic: topics.orders,
  stallMs: config.CONSUMER_STALL_MS,
  probeMs: config.CONSUMER_LAG_PROBE_MS,
  log,
});
const server = createOpsServer(metrics.registry, () => {
  const report = health.report();
  return {
    ...report,
    ok: !stopping() && report.ok,
    consumer: config.CONSUMER_NAME,
    groupId: config.GROUP_ID,
  };
});
const port = await new Promise<number>((resolve) =>
  listenOrExit(server, { host: config.HOST, port: config.PORT }, log, resolve),
);

const consumer = new SupervisedConsumer({
  kafka,
  consumerConfig: {
    groupId: config.GROUP_ID,
    // Short session: a consumer killed by a failure point is replaced within ~10 s
    // instead of the 30 s default, and its partitions are handed over sooner.
    sessionTimeout: 10_000,
    rebalanceTimeout: 10_000,
    heartbeatInterval: 1_000,
    // kafkajs' production defaults, spelled out: under NODE_ENV=test it would swap in
    // others (15 fast retries), and the tests must run what production runs.
    retry: { initialRetryTime: 300, maxRetryTime: 30_000, factor: 0.2, multiplier: 2, retries: 5 },
  },
  topic: topics.orders,
  handler: (commitOffsets) =>
    createOnBatch({
      pool,
      chunkSize: config.CONSUMER_BATCH_MAX,
      commitOffsets,
      producer,
      failurePoints,
      metrics,
      log,
      consumerName: config.CONSUMER_NAME,
      dlqTopic: topics.deadLetter,
    }),
  health,
  log,
});
// Ready once the group gave us partitions: before that, nothing is consumed.
let announced = false;
const watchJoins = (e: ConsumerGroupJoinEvent): void => {
  const summary = {
    host: config.HOST,
    port,
    groupId: config.GROUP_ID,
    topic: topics.orders,
    database: maskUrl(config.DATABASE_URL),
    schema: config.DATABASE_SCHEMA,
    assignment: e.payload.memberAssignment,
  };
  if (!announced) log.info(summary, `inventory-consumer ready on ${config.HOST}:${port}`);
  else log.info(summary, 'consumer group rebalanced');
  announced = true;
};
health.onJoin(watchJoins);
await health.start();
await consumer.start();

disarmStartupSignal();
const shutdown = onShutdown(log, {
  message: 'stopping: finishing the chunk in flight',
  timeoutMs: 30_000,
  timeoutMessage: 'shutdown did not finish in 30 s; exiting',
  steps: [
    () =>
      consumer
        .stop()
        .catch((error: unknown) => log.warn({ err: error }, 'consumer disconnect failed')),
    () => health.stop(),
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
