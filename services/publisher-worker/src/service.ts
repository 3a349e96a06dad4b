import {
  createLogger,
  createPool,
  crashNow,
  OutboxMetrics,
  pgConfig,
  type RelayAcks,
} from '@outbox/core';
import type { Producer } from 'kafkajs';
import {
  closeServer,
  createOpsServer,
  demoTopics,
  demoTopicSpecs,
  ensureTopics,
  exitOnStartupSignal,
  FailurePoint,
  failurePointGate,
  listenOrExit,
  maskUrl,
  onShutdown,
  migrateLab,
  telemetry,
} from '@outbox/lab';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { loadConfig } from './config.ts';
import { createKafka, retryForever } from './kafka.ts';
import { watchOutage } from './outage.ts';
import { followActiveRelay } from './active-relay.ts';
import { RelaySwitch, type RelaySwitchOptions } from './relay-switch.ts';

/**
 * publisher-worker: the outbox relay as a process. Migrates (core serialises
 * concurrent migrations), connects Kafka through a socket factory the outage failure
 * point can cut, and relays the outbox to `orders.events` with LISTEN/NOTIFY wake-ups.
 * SIGTERM/SIGINT: the batch in flight finishes, then everything closes; a second
 * signal exits at once.
 */
const config = loadConfig(process.env);
const log = createLogger('publisher-worker', config.LOG_LEVEL).child({
  replicaId: config.REPLICA_ID,
});
const topics = demoTopics(config.TOPIC_PREFIX);
// Until `onShutdown` below, a signal exits at once (nothing is in flight yet).
const disarmStartupSignal = exitOnStartupSignal(log);

const pool = createPool(config, log, { max: 10, watchCheckedOut: true });
await migrateLab(pool);

const failurePoints = failurePointGate(config.CHAOS_ENABLED, pool, {
  listen: pgConfig(config),
  log,
});
await failurePoints.start();
const outageActive = () => failurePoints.isActive(FailurePoint.workerKafkaOutage);

const kafkaParts = createKafka(config, outageActive, log);
const { kafka, createProducer, sockets } = kafkaParts;
let { producer } = kafkaParts;
const stopOutageWatch = sockets ? watchOutage(outageActive, sockets, log) : () => undefined;
// Start-up survives Kafka being down (an outage armed before a restart): keep trying.
// No stop condition needed: until start-up is over a signal exits the process at once.
await retryForever('connecting the Kafka producer', () => producer.connect(), log);
await ensureTopics(kafka, Object.values(demoTopicSpecs(config.TOPIC_PREFIX)), log).catch(
  (error: unknown) => log.warn({ err: error }, 'could not create the topics'),
);

const registry = new Registry();
collectDefaultMetrics({ register: registry });
const metrics = new OutboxMetrics(registry, pool);

// The acks the current producer was built for (idempotent only for 'all').
let producerAcks: RelayAcks = 'all';
/**
 * The producer for a relay with `acks`: the current one when it was built for them,
 * else a new one (connected first; the old one is disconnected). Called by the switch
 * before it starts a relay, i.e. after the previous relay stopped: no send in flight.
 */
async function producerFor(acks: RelayAcks): Promise<Producer> {
  if (acks === producerAcks) return producer;
  const fresh = createProducer(acks);
  try {
    await fresh.connect();
  } catch (error) {
    await fresh.disconnect().catch(() => undefined);
    throw error;
  }
  const old = producer;
  producer = fresh;
  producerAcks = acks;
  relayOptions.producer = fresh;
  await old.disconnect().catch((error: unknown) => log.warn({ err: error }, 'producer disconnect'));
  return fresh;
}

const relayOptions: RelaySwitchOptions['relay'] = {
  pool,
  producer,
  // After a send whose outcome is unknown (a lost answer, a timeout, a sequence error)
  // kafkajs' sequence numbers may be those of a batch the broker appended; it cannot
  // reset them, so the relay asks for a new producer before it sends again. Connected
  // first: if Kafka is still down the renewal throws, the tick fails and the relay asks
  // again at its next send, never sending with the broken one. The options then carry
  // the new one, so a relay RelaySwitch builds starts on it (one built on the broken
  // one would renew it first: the mark is on the producer), and the shutdown closes it.
  async renewProducer(broken) {
    const renewed = createProducer(producerAcks);
    try {
      await renewed.connect();
    } catch (error) {
      await renewed.disconnect().catch(() => undefined);
      throw error;
    }
    producer = renewed;
    relayOptions.producer = renewed;
    await broken
      .disconnect()
      .catch((error: unknown) => log.warn({ err: error }, 'broken producer disconnect'));
    return renewed;
  },
  topics: { order: topics.orders },
  listen: pgConfig(config),
  batchSize: config.BATCH_SIZE,
  lanes: config.RELAY_LANES,
  pollIntervalMs: config.POLL_INTERVAL_MS,
  failureBackoffMaxMs: config.FAILURE_BACKOFF_MAX_MS,
  memberTtlMs: config.MEMBER_TTL_MS,
  maxAttempts: config.MAX_ATTEMPTS,
  replicaId: config.REPLICA_ID,
  metrics,
  log,
  hooks: {
    // Failure point 3: a real death after the broker's ack, before UPDATE sent_at.
    // The claim's transaction dies with the connection: the rows stay pending and
    // the next relay publishes them again (at-least-once).
    async afterPublish(rows) {
      if (await failurePoints.fire(FailurePoint.workerKillMidPublish)) {
        // The batch's publish spans are ended (Kafka acked it): export them first, as
        // crashNow flushes its log line, so the trace shows the send the crash repeats.
        await telemetry().flush();
        await crashNow(
          log,
          { rows: rows.length, firstId: rows[0]?.id, lastId: rows.at(-1)?.id },
          'worker.kill_mid_publish: Kafka acked the batch; dying before marking it sent',
        );
      }
    },
  },
};
// The demo's relay handover (polling relay or Debezium) decides whether we publish,
// and the `relay_acks` setting with which acks (the 3-broker lesson).
const activeRelay = await followActiveRelay(pool, log);
const relay = new RelaySwitch({
  relay: relayOptions,
  producerFor,
  want: () => {
    const active = activeRelay.current();
    if (active.relay === 'cdc') return { role: 'confirm', slot: active.slot, topic: active.topic };
    // Failure point 7: the teaching switch, applied without a restart.
    const sharded = config.SHARDED && !failurePoints.isActive(FailurePoint.workersUnsharded);
    return { role: 'relay', sharded, acks: activeRelay.acks() === '1' ? 1 : 'all' };
  },
  log,
});
new Gauge({
  name: 'outbox_worker_sharded',
  help: '1 while this replica relays sharded (FIFO per aggregate), 0 while unsharded.',
  registers: [registry],
  collect() {
    this.set(relay.isSharded ? 1 : 0);
  },
});
await relay.start();

// Healthy means the relay loop is making rounds: a tick completed within RELAY_STALL_MS.
const server = createOpsServer(registry, () => {
  const lastTickAgoMs = Date.now() - relay.lastTickAt;
  const stalled = lastTickAgoMs > config.RELAY_STALL_MS;
  return {
    ok: !shutdown.stopping && !stalled,
    ...(stalled ? { reason: `no relay tick completed for ${lastTickAgoMs} ms` } : {}),
    replicaId: config.REPLICA_ID,
    sharded: relay.isSharded,
    role: relay.role.role,
    // The producer acks the running relay uses ('all', or 1 for the 3-broker lesson).
    ...(relay.role.role === 'relay' ? { acks: relay.role.acks ?? 'all' } : {}),
    lastTickAgoMs,
  };
});
listenOrExit(server, { host: config.HOST, port: config.PORT }, log, (port) => {
  log.info(
    {
      host: config.HOST,
      port,
      database: maskUrl(config.DATABASE_URL),
      schema: config.DATABASE_SCHEMA,
      topic: topics.orders,
      sharded: relay.isSharded,
    },
    `publisher-worker ready on ${config.HOST}:${port}`,
  );
});

disarmStartupSignal();
const shutdown = onShutdown(log, {
  message: 'stopping: finishing the batch in flight',
  timeoutMs: 40_000,
  timeoutMessage: 'shutdown did not finish in 40 s; exiting',
  steps: [
    () => relay.stop(),
    () => activeRelay.stop(),
    stopOutageWatch,
    () => failurePoints.stop(),
    () =>
      producer
        .disconnect()
        .catch((error: unknown) => log.warn({ err: error }, 'producer disconnect failed')),
    () => closeServer(server, 'all'),
    () => pool.end(),
  ],
});
