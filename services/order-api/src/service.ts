import { createServer } from 'node:http';
import { createLogger, createPool, pgConfig } from '@outbox/core';
import {
  closeServer,
  demoTopics,
  exitOnStartupSignal,
  demoTopicSpecs,
  ensureTopics,
  failurePointGate,
  listenOrExit,
  maskUrl,
  onShutdown,
  migrateLab,
} from '@outbox/lab';
import { createApp } from './app.ts';
import { loadConfig } from './config.ts';
import { createKafka } from './kafka.ts';

/**
 * order-api: migrate (safe when several processes start at once: core serialises
 * migrations on an advisory lock), connect Kafka, follow the failure points, listen.
 * SIGTERM/SIGINT: stop accepting, let in-flight requests finish, close the pool and
 * the producer. A second signal exits at once.
 */
const config = loadConfig(process.env);
const log = createLogger('order-api', config.LOG_LEVEL);
// Until `onShutdown` below, a signal (or the supervisor's death) exits at once.
const disarmStartupSignal = exitOnStartupSignal(log);

const pool = createPool(config, log, { max: 20 });

await migrateLab(pool);
const { kafka, producer, network } = createKafka(config, log);
await producer.connect();
const topic = demoTopics(config.TOPIC_PREFIX).orders;
// The naive mode produces here directly; make sure the demo's topics exist, as every
// service creates them (one spec: whoever starts first, the same partitions). Not
// fatal: the worker creates them too.
await ensureTopics(kafka, Object.values(demoTopicSpecs(config.TOPIC_PREFIX)), log).catch(
  (error: unknown) => log.warn({ err: error }, 'could not create the topics'),
);
const failurePoints = failurePointGate(config.CHAOS_ENABLED, pool, {
  listen: pgConfig(config),
  log,
});
await failurePoints.start();

const app = createApp({ config, pool, producer, network, failurePoints, log });
const server = createServer((req, res) => {
  // While stopping, tell keep-alive clients to reconnect (elsewhere) after this response.
  if (shutdown.stopping) res.setHeader('Connection', 'close');
  app(req, res);
});
listenOrExit(server, { host: config.HOST, port: config.PORT }, log, (port) => {
  log.info(
    {
      host: config.HOST,
      port,
      database: maskUrl(config.DATABASE_URL),
      schema: config.DATABASE_SCHEMA,
      topic,
    },
    `listening on ${config.HOST}:${port}`,
  );
});

// Armed right after listen (no await in between, so no request sees it unset).
disarmStartupSignal();
const shutdown = onShutdown(log, {
  message: 'stopping: no new connections, finishing in-flight requests',
  timeoutMs: 15_000,
  timeoutMessage: 'in-flight requests did not finish in 15 s; exiting',
  steps: [
    // In-flight requests finish; idle keep-alive connections are cut.
    () => closeServer(server, 'idle'),
    () => failurePoints.stop(),
    () =>
      producer
        .disconnect()
        .catch((error: unknown) => log.warn({ err: error }, 'producer disconnect')),
    () => pool.end(),
  ],
});
