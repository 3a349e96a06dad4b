import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Logger } from '@outbox/core';
import { demoTopics, kafkaClient } from '@outbox/lab';
import type { Pool } from 'pg';
import { Server as SocketServer } from 'socket.io';
import { createApp } from './app.ts';
import { ChaosPanel } from './chaos/failure-points.ts';
import { defaultOrigins, type DashboardConfig } from './config.ts';
import { SOCKET_EVENTS } from './contract.ts';
import { DashboardMetrics } from './metrics.ts';
import { OriginPolicy } from './security/origins.ts';
import { ConsumerLagMonitor } from './stats/consumer-lag.ts';
import { PrometheusAlertsMonitor } from './stats/prometheus-alerts.ts';
import { KafkaClusterMonitor } from './stats/kafka-cluster.ts';
import { StatsEngine } from './stats/engine.ts';
import { SpanStore } from './traces/span-store.ts';

export interface Dashboard {
  url: string;
  port: number;
  engine: StatsEngine;
  origins: OriginPolicy;
  http: HttpServer;
  io: SocketServer;
  /** Stops ticking, closes sockets and the HTTP server (not the pool). Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the dashboard on `config.HOST:PORT`: derives the stats from scratch, starts
 * the tick, serves REST + the web build, and pushes every StatsMessage to socket.io
 * clients. main.ts runs it as a process; tests run it in-process the same way.
 */
export async function startDashboard(deps: {
  config: DashboardConfig;
  pool: Pool;
  log: Logger;
}): Promise<Dashboard> {
  const { config, pool, log } = deps;
  const metrics = new DashboardMetrics();
  // Kafka, for the consumer group's lag only: the dashboard produces and consumes nothing.
  const consumerLag = new ConsumerLagMonitor({
    kafka: kafkaClient(config, 'dashboard-api', log),
    groupId: config.CONSUMER_GROUP_ID ?? `${config.TOPIC_PREFIX}inventory`,
    topic: demoTopics(config.TOPIC_PREFIX).orders,
    stallMs: config.CONSUMER_STALL_SECONDS * 1000,
    log,
  });
  // Brokers, leaders and ISR: a client of its own with short timeouts and no retries,
  // so a SIGSTOPped broker costs one reading, not a queue of them.
  const kafkaCluster = new KafkaClusterMonitor({
    kafka: kafkaClient(config, 'dashboard-api-metadata', log, {
      connectionTimeout: 1_000,
      requestTimeout: 2_000,
      retry: { retries: 0 },
    }),
    topic: demoTopics(config.TOPIC_PREFIX).orders,
    brokers: config.KAFKA_CLUSTER_NODES,
    intervalMs: config.KAFKA_METADATA_INTERVAL_MS,
    log,
  });
  const prometheus = config.PROMETHEUS_URL
    ? new PrometheusAlertsMonitor({
        url: config.PROMETHEUS_URL,
        intervalMs: config.PROMETHEUS_INTERVAL_MS,
        log,
      })
    : undefined;
  const engine = new StatsEngine({
    consumerLag,
    kafkaCluster,
    ...(prometheus ? { prometheus } : {}),
    pool,
    log,
    intervalMs: config.STATS_INTERVAL_MS,
    settleSeconds: config.SETTLE_SECONDS,
    chaosEnabled: config.CHAOS_ENABLED,
  });
  const origins = new OriginPolicy(config.ALLOWED_ORIGINS ?? defaultOrigins(config.PORT));
  const chaos = new ChaosPanel(pool);
  const spans = new SpanStore();
  const app = createApp({ config, pool, engine, chaos, origins, metrics, spans, log });
  const http = createServer(app);
  const io = new SocketServer(http, {
    serveClient: false,
    // Browsers do not apply CORS to WebSockets: the handshake checks the Origin itself.
    allowRequest: origins.allowRequest,
    cors: { origin: (origin, cb) => cb(null, origins.allows(origin)) },
  });
  io.on('connection', (socket) => {
    metrics.socketClients.inc();
    // A new client gets the latest numbers at once rather than at the next tick.
    if (engine.latest) socket.emit(SOCKET_EVENTS.stats, engine.latest);
    socket.on('disconnect', () => metrics.socketClients.dec());
  });
  engine.subscribe((message) => {
    metrics.tickDuration.observe(message.tickMs / 1000);
    io.emit(SOCKET_EVENTS.stats, message);
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(config.PORT, config.HOST, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  if (!config.ALLOWED_ORIGINS) origins.set(defaultOrigins(port));
  // Listening first: deriving the counters from scratch takes seconds on a big
  // database (bench:tick), and /healthz should answer meanwhile ("starting").
  consumerLag.start();
  kafkaCluster.start();
  prometheus?.start();
  try {
    await engine.start();
  } catch (error) {
    await consumerLag.stop();
    await kafkaCluster.stop();
    await prometheus?.stop();
    await new Promise<void>((resolve) => {
      void io.close(() => resolve());
      http.closeAllConnections();
    });
    throw error;
  }
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    engine,
    origins,
    http,
    io,
    close() {
      closing ??= (async () => {
        await engine.stop();
        await consumerLag.stop();
        await kafkaCluster.stop();
        await prometheus?.stop();
        await new Promise<void>((resolve) => {
          void io.close(() => resolve());
          http.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}
