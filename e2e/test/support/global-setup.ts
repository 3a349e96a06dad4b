import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  ensurePrometheus,
  OUTBOX_RULES_FILE,
  startDemoCluster,
  startSystem,
  type KafkaCluster,
} from '@outbox/demo';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

/** A port nobody listens on now (the kernel picks it), so the run never collides with a demo. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/** What differs between the e2e systems: how many brokers, and whether Prometheus runs. */
export interface E2eSystemOptions {
  /**
   * 3: a KRaft cluster of three brokers (the demo's `--brokers 3`), orders.events with
   * replication factor 3 and min.insync.replicas 2; default one broker.
   */
  brokers?: 1 | 3;
  /** Prometheus beside the services (default true). */
  prometheus?: boolean;
}

/**
 * The whole system, once for every spec of a run: PostgreSQL + Kafka (dev-stack), the
 * four services and dashboard-api (serving the web build) as real supervised processes,
 * in a schema and topic prefix of their own. The specs break it on purpose and reset it.
 */
export async function startE2eSystem(project: TestProject, options: E2eSystemOptions = {}) {
  const id = randomBytes(4).toString('hex');
  const schema = `e2e_${id}`;
  const ports = {
    dashboard: await freePort(),
    orderApi: await freePort(),
    worker1: await freePort(),
    worker2: await freePort(),
    consumer: await freePort(),
  };
  const logDir = fileURLToPath(new URL(`../../test-results/logs/${schema}`, import.meta.url));
  const log = (line: string) => process.stderr.write(`[e2e system] ${line}\n`);
  const brokers = options.brokers ?? 1;
  log(`schema ${schema}, ${brokers} broker(s), ports ${JSON.stringify(ports)}, logs ${logDir}`);
  // Three brokers: a KRaft cluster in a data dir of the e2e's own (never the demo's or
  // the soak's), started before the system and stopped after it.
  const cluster: KafkaCluster | undefined =
    brokers === 3
      ? await startDemoCluster({
          dataDir: fileURLToPath(new URL('../../test-results/cluster', import.meta.url)),
          log: (line) => log(line),
        })
      : undefined;
  const system = await startSystem({
    schema,
    topicPrefix: `e2e-${id}.`,
    ports,
    dashboard: true,
    // Two failed attempts dead-letter a row, so the requeue spec needs seconds, not minutes.
    env: { MAX_ATTEMPTS: '2', LOG_LEVEL: 'info' },
    logDir,
    log,
    ...(cluster ? { cluster } : {}),
    ...(options.prometheus === false ? {} : { prometheus: prometheusFor(schema, log) }),
  }).catch(async (error: unknown) => {
    await cluster?.stop();
    throw error;
  });
  try {
    await system.waitReady(brokers === 3 ? 300_000 : 180_000);
  } catch (error) {
    await system.stop();
    await cluster?.stop();
    throw error;
  }
  const dashboardUrl = system.urls.dashboard;
  if (!dashboardUrl) throw new Error('startSystem did not start dashboard-api');
  if (options.prometheus !== false && !system.urls.prometheus)
    throw new Error('startSystem did not start Prometheus');
  project.provide('prometheusUrl', system.urls.prometheus ?? '');
  project.provide('dashboardUrl', dashboardUrl);
  project.provide('databaseUrl', system.databaseUrl);
  project.provide('schema', schema);
  return async () => {
    await system.stop();
    await cluster?.stop();
    // The schema stays behind for inspection with E2E_KEEP=1.
    if (process.env.E2E_KEEP === '1') return;
    const client = new pg.Client({ connectionString: system.databaseUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
    await client.end();
  };
}

/**
 * Prometheus as the demo runs it, with the repository's rules, but scraping every
 * second and with `for:` shortened to 2 s: a spec sees an alert fire in seconds.
 */
function prometheusFor(schema: string, log: (line: string) => void) {
  const prometheusDir = fileURLToPath(
    new URL(`../../test-results/prometheus/${schema}`, import.meta.url),
  );
  mkdirSync(prometheusDir, { recursive: true });
  const rulesFile = `${prometheusDir}/outbox.rules.yml`;
  writeFileSync(
    rulesFile,
    readFileSync(OUTBOX_RULES_FILE, 'utf8').replace(/^(\s+)for: \S+$/gm, '$1for: 2s'),
  );
  return {
    binaries: ensurePrometheus(log),
    ruleFiles: [rulesFile],
    scrapeInterval: '1s',
    dir: prometheusDir,
  };
}

/** The specs of test/ (not *.cluster.test.ts): one broker, Prometheus. */
export default function setup(project: TestProject) {
  return startE2eSystem(project);
}

declare module 'vitest' {
  export interface ProvidedContext {
    dashboardUrl: string;
    prometheusUrl: string;
    databaseUrl: string;
    schema: string;
  }
}
