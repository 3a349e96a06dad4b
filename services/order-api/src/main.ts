import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, demoTopics, FailurePoints, maskUrl, migrate, pgConfig } from '@outbox/core';
import pg from 'pg';
import { createApp } from './app.ts';
import { loadConfig } from './config.ts';
import { createKafka, ensureTopic } from './kafka.ts';

/**
 * order-api: migrate (safe when several processes start at once: core serialises
 * migrations on an advisory lock), connect Kafka, follow the failure points, listen.
 * SIGTERM/SIGINT: stop accepting, let in-flight requests finish, close the pool and
 * the producer. A second signal exits at once.
 */
const config = loadConfig(process.env);
const log = createLogger('order-api', config.LOG_LEVEL);

const pool = new pg.Pool({ ...pgConfig(config), max: 20, connectionTimeoutMillis: 5_000 });
// An idle client losing its connection must not crash the process; the pool replaces it.
pool.on('error', (error) => log.warn({ err: error }, 'idle PostgreSQL client error'));

await migrate(pool);
const { kafka, producer, network } = createKafka(config, log);
await producer.connect();
const topic = demoTopics(config.TOPIC_PREFIX).orders;
// The naive mode produces here directly; make sure its topic exists (the relay
// would create it too). Not fatal: the broker may auto-create it.
await ensureTopic(kafka, topic).catch((error: unknown) =>
  log.warn({ err: error, topic }, 'could not create the orders topic'),
);
const failurePoints = new FailurePoints(pool, { listen: pgConfig(config), log });
await failurePoints.start();

const app = createApp({ config, pool, producer, network, failurePoints, log });
let stopping = false;
const server = createServer((req, res) => {
  // While stopping, tell keep-alive clients to reconnect (elsewhere) after this response.
  if (stopping) res.setHeader('Connection', 'close');
  app(req, res);
});
server.on('error', (error) => {
  log.fatal({ err: error }, 'HTTP server error');
  process.exit(1);
});
server.listen(config.PORT, config.HOST, () => {
  const { port } = server.address() as AddressInfo;
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

async function shutdown(signal: string): Promise<void> {
  log.info({ signal }, 'stopping: no new connections, finishing in-flight requests');
  const force = setTimeout(() => {
    log.error('in-flight requests did not finish in 15 s; exiting');
    process.exit(1);
  }, 15_000);
  force.unref();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  await failurePoints.stop();
  await producer
    .disconnect()
    .catch((error: unknown) => log.warn({ err: error }, 'producer disconnect'));
  await pool.end();
  log.info('stopped');
  process.exit(0);
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
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
