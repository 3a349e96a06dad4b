import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startSystem } from '@outbox/demo';
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

/**
 * The whole system, once for every spec: PostgreSQL + Kafka (dev-stack), the four
 * services and dashboard-api (serving the web build) as real supervised processes, in
 * a schema and topic prefix of their own. The specs break it on purpose and reset it.
 */
export default async function setup(project: TestProject) {
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
  log(`schema ${schema}, ports ${JSON.stringify(ports)}, logs ${logDir}`);
  const system = await startSystem({
    schema,
    topicPrefix: `e2e-${id}.`,
    ports,
    dashboard: true,
    // Two failed attempts dead-letter a row, so the requeue spec needs seconds, not minutes.
    env: { MAX_ATTEMPTS: '2', LOG_LEVEL: 'info' },
    logDir,
    log,
  });
  try {
    await system.waitReady(180_000);
  } catch (error) {
    await system.stop();
    throw error;
  }
  const dashboardUrl = system.urls.dashboard;
  if (!dashboardUrl) throw new Error('startSystem did not start dashboard-api');
  project.provide('dashboardUrl', dashboardUrl);
  project.provide('databaseUrl', system.databaseUrl);
  project.provide('schema', schema);
  return async () => {
    await system.stop();
    // The schema stays behind for inspection with E2E_KEEP=1.
    if (process.env.E2E_KEEP === '1') return;
    const client = new pg.Client({ connectionString: system.databaseUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
    await client.end();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    dashboardUrl: string;
    databaseUrl: string;
    schema: string;
  }
}
