import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { pgConfig } from '@outbox/core';
import { Kafka, logLevel } from 'kafkajs';
import { demoTopics, demoTopicSpecs, migrateLab } from '@outbox/lab';
import {
  isPortFree,
  startPrometheus,
  startStack,
  Supervisor,
  type PrometheusBinaries,
  type RunningPrometheus,
  type KafkaCluster,
  type ServiceStatus,
  type StackOptions,
} from '@outbox/dev-stack';
import { followBrokerChaos, type BrokerChaos } from './broker-chaos.ts';
import { ProcessTable } from './process-table.ts';
import { seedInventory } from './seed.ts';
import { TrafficGenerator } from './traffic.ts';
import { followTrafficRate } from './traffic-setting.ts';
import { followRelayHandover, type RelayHandover } from './relay-handover.ts';
import { waitHealthy } from './health.ts';

/** Ports of the demo's processes (defaults 3000–3004). */
export interface SystemPorts {
  dashboard: number;
  orderApi: number;
  worker1: number;
  worker2: number;
  consumer: number;
}

export interface SystemOptions {
  /** DATABASE_SCHEMA of every service; created and migrated (default 'public'). */
  schema?: string;
  /** TOPIC_PREFIX of every service (default ''). */
  topicPrefix?: string;
  ports?: Partial<SystemPorts>;
  /** Start services/dashboard-api too (default: when it exists). */
  dashboard?: boolean;
  /** Extra environment for every service. */
  env?: Record<string, string>;
  /**
   * Extra environment of one process, by name ('publisher-worker-1', 'inventory-consumer',
   * …), applied last: the soak points one service's links at a fault proxy with it.
   */
  processEnv?: Record<string, Record<string, string>>;
  log?: (line: string) => void;
  /** Which PostgreSQL and Kafka (dev-stack options: data dir, env); default the repo's `.data`. */
  stack?: StackOptions;
  /** Each process logs to `<logDir>/<name>.log` (default `.data/logs`, or `.data/logs/<schema>`). */
  logDir?: string;
  /** Run Prometheus beside the services (default: none; `npm run demo` asks for it). */
  prometheus?: SystemPrometheusOptions;
  /**
   * OpenTelemetry traces of order-api, the workers and the consumer, exported to the
   * dashboard's OTLP/HTTP receiver (POST /v1/traces), which shows each order's legs in
   * its journey (default off; needs the dashboard). To send them to a collector
   * instead, set OTEL_EXPORTER_OTLP_ENDPOINT in `env` and leave this off.
   */
  tracing?: boolean;
  /**
   * A running 3-node cluster (dev-stack's startCluster, in a data dir of its own): the
   * services use its brokers instead of the dev-stack's single one, the demo's topics
   * get replication factor 3 and min.insync.replicas 2, and the system carries out the
   * broker.* failure points on it (broker-chaos.ts). Default: the single broker. The
   * caller owns the cluster: stop() leaves it running.
   */
  cluster?: KafkaCluster;
}

/** Prometheus for the system: scrapes every process, with the alert rules loaded. */
export interface SystemPrometheusOptions {
  /** Debian's prometheus (dev-stack's ensurePrometheus / findPrometheus). */
  binaries: PrometheusBinaries;
  /** Alert rule files, loaded as they are (default: packages/ops/alerts/outbox.rules.yml). */
  ruleFiles?: string[];
  /** Default 5s; tests take 1s. */
  scrapeInterval?: string;
  /** Its configuration, targets file, TSDB and log (default `.data/prometheus/<schema>`). */
  dir?: string;
  /** If it cannot start: say so in the log and go on without it (the demo), instead of failing. */
  optional?: boolean;
}

/** The seed's alert rules (packages/ops), what the demo's Prometheus loads. */
export const OUTBOX_RULES_FILE = fileURLToPath(
  new URL('../../ops/alerts/outbox.rules.yml', import.meta.url),
);

export interface SystemUrls {
  dashboard?: string;
  orderApi: string;
  workers: string[];
  consumer: string;
  /** The system's Prometheus (UI and API), when it runs one. */
  prometheus?: string;
}

/** The whole backend, running: what the demo, the e2e specs, the scenario tests and the soak drive. */
export interface System {
  databaseUrl: string;
  kafkaBrokers: string[];
  schema: string;
  topicPrefix: string;
  /** A pool whose search_path is the system's schema. */
  pool: pg.Pool;
  urls: SystemUrls;
  supervisor: Supervisor;
  traffic: TrafficGenerator;
  /** The relay switch (polling ⇄ Debezium) the `relay_wanted` setting drives. */
  relayHandover: RelayHandover;
  /** Prometheus scraping every process, when asked for and started. */
  prometheus?: RunningPrometheus;
  /** Where each process writes `<name>.log`. */
  logDir: string;
  /** With `cluster`: the broker.* failure points, carried out. */
  brokerChaos?: BrokerChaos;
  /** Resolves when every service answers /healthz (rejects after `timeoutMs`, default 120 s). */
  waitReady(timeoutMs?: number): Promise<void>;
  /** Stops traffic and every process (SIGTERM, then SIGKILL after 10 s). Idempotent. */
  stop(): Promise<void>;
}

export const DEFAULT_PORTS: SystemPorts = {
  dashboard: 3000,
  orderApi: 3001,
  worker1: 3002,
  worker2: 3003,
  consumer: 3004,
};

const root = fileURLToPath(new URL('../../..', import.meta.url));

interface ProcessSpec {
  name: string;
  kind: string;
  dir: string;
  port: number;
  env: Record<string, string>;
}

/**
 * Brings the backend up: PostgreSQL and Kafka (dev-stack), migrations and seeded
 * inventory in `schema`, then order-api, two publisher-worker replicas,
 * inventory-consumer and (when built) dashboard-api, each a real process under a
 * supervisor that restarts what dies. The supervisor's view is mirrored into the
 * `demo_processes` table for the dashboard; the `traffic_rate` demo setting drives the
 * traffic generator, so the dashboard can change it without talking to this process.
 */
export async function startSystem(options: SystemOptions = {}): Promise<System> {
  const schema = options.schema ?? 'public';
  const topicPrefix = options.topicPrefix ?? '';
  const ports = { ...DEFAULT_PORTS, ...options.ports };
  const log = options.log ?? (() => undefined);
  const dashboardBuilt = existsSync(join(root, 'services/dashboard-api/src/main.ts'));
  const withDashboard = options.dashboard ?? dashboardBuilt;
  // Before anything starts: a service whose port is taken would restart forever while
  // the URLs printed led to whatever holds the port (an earlier demo, say).
  await assertPortsFree([
    ...(withDashboard ? [{ port: ports.dashboard, name: 'dashboard-api' }] : []),
    { port: ports.orderApi, name: 'order-api' },
    { port: ports.worker1, name: 'publisher-worker-1' },
    { port: ports.worker2, name: 'publisher-worker-2' },
    { port: ports.consumer, name: 'inventory-consumer' },
  ]);
  const stack = await startStack({ log, ...options.stack });
  const cluster = options.cluster;
  const kafkaBrokers = cluster ? cluster.brokers : stack.kafkaBrokers;
  if (cluster) await createClusterTopics(kafkaBrokers, topicPrefix, log);

  const admin = new pg.Client({ connectionString: stack.databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(schema)}`);
  await admin.end();
  const pool = new pg.Pool({
    ...pgConfig({ DATABASE_URL: stack.databaseUrl, DATABASE_SCHEMA: schema }),
    max: 4,
  });
  pool.on('error', (error) => log(`pool: ${error.message}`));
  await migrateLab(pool);
  await seedInventory(pool);

  const url = (port: number) => `http://127.0.0.1:${port}`;
  const specs: ProcessSpec[] = [
    { name: 'order-api', kind: 'order-api', dir: 'order-api', port: ports.orderApi, env: {} },
    {
      name: 'publisher-worker-1',
      kind: 'publisher-worker',
      dir: 'publisher-worker',
      port: ports.worker1,
      env: { REPLICA_ID: `${schema}-worker-1` },
    },
    {
      name: 'publisher-worker-2',
      kind: 'publisher-worker',
      dir: 'publisher-worker',
      port: ports.worker2,
      env: { REPLICA_ID: `${schema}-worker-2` },
    },
    {
      name: 'inventory-consumer',
      kind: 'inventory-consumer',
      dir: 'inventory-consumer',
      port: ports.consumer,
      env: {},
    },
  ];
  if (withDashboard) {
    if (!dashboardBuilt) throw new Error('services/dashboard-api is not built');
    specs.push({
      name: 'dashboard-api',
      kind: 'dashboard-api',
      dir: 'dashboard-api',
      port: ports.dashboard,
      // How many brokers the dashboard shows (its stats.kafka).
      env: { KAFKA_CLUSTER_NODES: String(cluster ? cluster.nodes.length : 1) },
    });
  }

  const table = new ProcessTable(pool, log);
  await table.reset(specs.map((s) => ({ name: s.name, kind: s.kind, url: url(s.port) })));
  const logDir = options.logDir ?? join(root, '.data', 'logs', schema === 'public' ? '' : schema);
  // Before the services: dashboard-api is told its URL at start.
  const prometheus = options.prometheus
    ? await startSystemPrometheus(options.prometheus, specs, schema, log)
    : undefined;
  if (prometheus) {
    const dashboard = specs.find((s) => s.kind === 'dashboard-api');
    if (dashboard) dashboard.env.PROMETHEUS_URL = prometheus.url;
  }
  const supervisor = new Supervisor({
    logDir,
    log,
    onChange: (status: ServiceStatus) => table.record(status),
  });
  const dashboardSpec = specs.find((s) => s.kind === 'dashboard-api');
  if (options.tracing) {
    if (!dashboardSpec) throw new Error('tracing to the dashboard needs the dashboard');
    const token = options.env?.CONTROL_TOKEN;
    for (const spec of specs) {
      if (spec === dashboardSpec) continue;
      Object.assign(spec.env, {
        OTEL_EXPORTER_OTLP_ENDPOINT: url(dashboardSpec.port),
        OTEL_SERVICE_NAME: spec.kind,
        // Spans reach the journey within half a second (the SDK's default waits 5 s).
        OTEL_BSP_SCHEDULE_DELAY: '500',
        ...(token ? { OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${token}` } : {}),
      });
    }
  }
  const baseEnv: Record<string, string> = {
    DATABASE_URL: stack.databaseUrl,
    DATABASE_SCHEMA: schema,
    KAFKA_BROKERS: kafkaBrokers.join(','),
    TOPIC_PREFIX: topicPrefix,
    HOST: '127.0.0.1',
    // The demo is a lab for breaking things: every service follows the failure points
    // and the dashboard has the failure buttons (off by default outside the demo).
    CHAOS_ENABLED: 'true',
    ...options.env,
  };
  for (const spec of specs) {
    supervisor.add({
      name: spec.name,
      command: process.execPath,
      args: ['--import', 'tsx', 'src/main.ts'],
      cwd: join(root, 'services', spec.dir),
      // options.env last: a caller can override what the demo sets (e.g. CHAOS_ENABLED).
      env: {
        ...process.env,
        ...baseEnv,
        ...spec.env,
        ...options.env,
        ...options.processEnv?.[spec.name],
        PORT: String(spec.port),
      },
    });
  }

  const urls: SystemUrls = {
    orderApi: url(ports.orderApi),
    workers: [url(ports.worker1), url(ports.worker2)],
    consumer: url(ports.consumer),
    ...(specs.some((s) => s.kind === 'dashboard-api') ? { dashboard: url(ports.dashboard) } : {}),
    ...(prometheus ? { prometheus: prometheus.url } : {}),
  };
  const traffic = new TrafficGenerator(urls.orderApi);
  const unfollow = await followTrafficRate(
    { connectionString: stack.databaseUrl, schema },
    pool,
    traffic,
    log,
  );

  const relayHandover = await followRelayHandover({
    pool,
    schema,
    topic: demoTopics(topicPrefix).orders,
    stack: { log, ...options.stack },
    log,
  });

  const brokerChaos = cluster
    ? await followBrokerChaos({ pool, cluster, topic: demoTopics(topicPrefix).orders, log })
    : undefined;

  let stopping: Promise<void> | undefined;
  return {
    databaseUrl: stack.databaseUrl,
    kafkaBrokers,
    schema,
    topicPrefix,
    pool,
    urls,
    supervisor,
    traffic,
    relayHandover,
    ...(prometheus ? { prometheus } : {}),
    ...(brokerChaos ? { brokerChaos } : {}),
    logDir,
    waitReady: (timeoutMs = 120_000) =>
      waitHealthy(
        specs.map((s) => url(s.port)),
        timeoutMs,
      ),
    stop() {
      stopping ??= (async () => {
        traffic.stop();
        await unfollow();
        await relayHandover.stop();
        await brokerChaos?.stop();
        await supervisor.stop();
        await prometheus?.stop();
        await table.idle();
        await pool.end();
      })();
      return stopping;
    },
  };
}

/**
 * One scrape target per process, labelled with its name (replicas apart). Written to
 * Prometheus' targets file (file_sd), which it watches: the demo's set of processes is
 * fixed at start today, and a process added or moved would call setTargets with the new
 * list, without restarting Prometheus. A process that is down stays a target, shown
 * down: that is the truth about it.
 */
function scrapeTargets(specs: ProcessSpec[]) {
  return specs.map((s) => ({
    job: s.kind,
    address: `127.0.0.1:${s.port}`,
    labels: { process: s.name },
  }));
}

async function startSystemPrometheus(
  options: SystemPrometheusOptions,
  specs: ProcessSpec[],
  schema: string,
  log: (line: string) => void,
): Promise<RunningPrometheus | undefined> {
  const dir = options.dir ?? join(root, '.data', 'prometheus', schema);
  try {
    return await startPrometheus({
      binaries: options.binaries,
      dir,
      targets: scrapeTargets(specs),
      ruleFiles: options.ruleFiles ?? [OUTBOX_RULES_FILE],
      ...(options.scrapeInterval ? { scrapeInterval: options.scrapeInterval } : {}),
      log,
    });
  } catch (error) {
    if (!options.optional) throw error;
    // One line: the log file has the rest.
    const reason = (error as Error).message.split('\n')[0];
    log(
      `prometheus: not started (${reason}; see ${join(dir, 'prometheus.log')}), going on without it`,
    );
    return undefined;
  }
}

/**
 * The demo's topics on the cluster, created before any service starts (each service
 * would create them with the broker's defaults): replication factor 3,
 * min.insync.replicas 2, no unclean leader election.
 */
async function createClusterTopics(
  brokers: string[],
  topicPrefix: string,
  log: (line: string) => void,
): Promise<void> {
  const kafka = new Kafka({
    clientId: 'demo-topics',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
  });
  const specs = Object.values(demoTopicSpecs(topicPrefix, 3));
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = specs.filter((s) => !existing.has(s.topic));
    // Not waitForLeaders: kafkajs' wait asks a broker that may not know the topic yet
    // and fails (UNKNOWN_TOPIC_OR_PARTITION); every partition's leader is awaited below.
    if (missing.length > 0) await admin.createTopics({ waitForLeaders: false, topics: missing });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ready = await admin
        .fetchTopicMetadata({ topics: specs.map((s) => s.topic) })
        .then(({ topics }) =>
          topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0)),
        )
        .catch(() => false);
      if (ready) break;
      if (Date.now() > deadline)
        throw new Error(
          `the topics ${specs.map((s) => s.topic).join(', ')} have no leaders after 60 s`,
        );
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    log(
      `topics      ${specs.map((s) => s.topic).join(', ')}: replication factor 3, min.insync.replicas 2${missing.length === 0 ? ' (already there)' : ''}`,
    );
  } finally {
    await admin.disconnect();
  }
}

/** Throws naming every port of `wanted` that something already listens on (127.0.0.1). */
async function assertPortsFree(wanted: { port: number; name: string }[]): Promise<void> {
  const taken: string[] = [];
  for (const { port, name } of wanted)
    if (!(await isPortFree(port))) taken.push(`port ${port} (${name}) is in use on 127.0.0.1`);
  if (taken.length > 0)
    throw new Error(
      `${taken.join('; ')}: is another demo still running? Stop it, or choose other ports (DEMO_PORT)`,
    );
}
