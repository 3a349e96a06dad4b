import type { AddressInfo } from 'node:net';
import { createLogger, demoTopics, FailurePoints, maskUrl, migrate, pgConfig } from '@outbox/core';
import { Partitioners } from 'kafkajs';
import pg from 'pg';
import { loadConfig } from './config.ts';
import { createHttpServer } from './http.ts';
import { createKafka, ensureTopics } from './kafka.ts';
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
let stopping = false;
let joined = false;

// A signal during start-up: nothing is in flight yet, so leaving at once is safe.
const exitEarly = (signal: NodeJS.Signals) => {
  log.info({ signal }, 'signal during start-up: exiting');
  process.exit(0);
};
process.once('SIGTERM', exitEarly).once('SIGINT', exitEarly);

const pool = new pg.Pool({ ...pgConfig(config), max: 5, connectionTimeoutMillis: 5_000 });
// An idle client losing its connection must not crash the process; the pool replaces it.
pool.on('error', (error) => log.warn({ err: error }, 'idle PostgreSQL client error'));
// Workaround (core's withTransaction does not listen on the client it checks out): a
// connection killed mid-transaction emits 'error' on a checked-out client, which
// without a listener crashes the process. The query in flight still rejects with it.
pool.on('connect', (client) =>
  client.on('error', (error) => log.warn({ err: error }, 'PostgreSQL connection lost')),
);
await migrate(pool);
const failurePoints = new FailurePoints(pool, { listen: pgConfig(config), log });
await failurePoints.start();

const kafka = createKafka(config, log);
await ensureTopics(kafka, [
  { topic: topics.orders, numPartitions: 6 },
  { topic: topics.deadLetter, numPartitions: 1 },
]).catch((error: unknown) => log.warn({ err: error }, 'could not create the topics'));
const producer = kafka.producer({
  // Java-compatible murmur2, as the relay uses: a dead letter keeps its key's partition logic.
  createPartitioner: Partitioners.DefaultPartitioner,
  allowAutoTopicCreation: false,
});
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
const server = createHttpServer(metrics.registry, () => ({
  ok: !stopping && joined,
  consumer: config.CONSUMER_NAME,
  groupId: config.GROUP_ID,
  joined,
}));
server.on('error', (error) => {
  log.fatal({ err: error }, 'HTTP server error');
  process.exit(1);
});
await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
const { port } = server.address() as AddressInfo;

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

async function shutdown(signal: string): Promise<void> {
  log.info({ signal }, 'stopping: finishing the message in flight');
  const force = setTimeout(() => {
    log.error('shutdown did not finish in 30 s; exiting');
    process.exit(1);
  }, 30_000);
  force.unref();
  await consumer
    .disconnect()
    .catch((error: unknown) => log.warn({ err: error }, 'consumer disconnect failed'));
  await producer
    .disconnect()
    .catch((error: unknown) => log.warn({ err: error }, 'producer disconnect failed'));
  await failurePoints.stop();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  await pool.end();
  log.info('stopped');
  process.exit(0);
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.off(signal, exitEarly);
  process.on(signal, () => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    void shutdown(signal).catch((error: unknown) => {
      log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    });
  });
}
