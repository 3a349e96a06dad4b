import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { pgConfig } from '@outbox/core';
import { demoTopics, migrateLab } from '@outbox/lab';
import { startStack, Supervisor, type ServiceStatus, type StackOptions } from '@outbox/dev-stack';
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
}

export interface SystemUrls {
  dashboard?: string;
  orderApi: string;
  workers: string[];
  consumer: string;
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
  /** Where each process writes `<name>.log`. */
  logDir: string;
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
  const stack = await startStack({ log, ...options.stack });

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
  const dashboardBuilt = existsSync(join(root, 'services/dashboard-api/src/main.ts'));
  if (options.dashboard ?? dashboardBuilt) {
    if (!dashboardBuilt) throw new Error('services/dashboard-api is not built');
    specs.push({
      name: 'dashboard-api',
      kind: 'dashboard-api',
      dir: 'dashboard-api',
      port: ports.dashboard,
      env: {},
    });
  }

  const table = new ProcessTable(pool, log);
  await table.reset(specs.map((s) => ({ name: s.name, kind: s.kind, url: url(s.port) })));
  const logDir = options.logDir ?? join(root, '.data', 'logs', schema === 'public' ? '' : schema);
  const supervisor = new Supervisor({
    logDir,
    log,
    onChange: (status: ServiceStatus) => table.record(status),
  });
  const baseEnv: Record<string, string> = {
    DATABASE_URL: stack.databaseUrl,
    DATABASE_SCHEMA: schema,
    KAFKA_BROKERS: stack.kafkaBrokers.join(','),
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

  let stopping: Promise<void> | undefined;
  return {
    databaseUrl: stack.databaseUrl,
    kafkaBrokers: stack.kafkaBrokers,
    schema,
    topicPrefix,
    pool,
    urls,
    supervisor,
    traffic,
    relayHandover,
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
        await supervisor.stop();
        await table.idle();
        await pool.end();
      })();
      return stopping;
    },
  };
}
