import { createLogger, maskUrl, migrate, pgConfig } from '@outbox/core';
import pg from 'pg';
import { isLoopbackHost, loadConfig } from './config.ts';
import { startDashboard } from './server.ts';

/**
 * dashboard-api: migrate (serialised by core), derive the stats, listen. SIGTERM /
 * SIGINT: stop ticking, close the sockets and the pool; a second signal exits at once.
 */
const config = loadConfig(process.env);
const log = createLogger('dashboard-api', config.LOG_LEVEL);
const pool = new pg.Pool({ ...pgConfig(config), max: 10, connectionTimeoutMillis: 5_000 });
pool.on('error', (error) => log.warn({ err: error }, 'idle PostgreSQL client error'));

await migrate(pool);
const dashboard = await startDashboard({ config, pool, log });
log.info(
  {
    host: config.HOST,
    port: dashboard.port,
    database: maskUrl(config.DATABASE_URL),
    schema: config.DATABASE_SCHEMA,
    control: config.CONTROL_TOKEN ? 'token' : isLoopbackHost(config.HOST) ? 'loopback' : 'closed',
    chaos: config.CHAOS_ENABLED,
    origins: dashboard.origins.list,
    web: config.WEB_DIST,
  },
  `listening on ${config.HOST}:${dashboard.port}`,
);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  log.info({ signal }, 'stopping');
  const force = setTimeout(() => {
    log.error('did not stop in 10 s; exiting');
    process.exit(1);
  }, 10_000);
  force.unref();
  await dashboard.close();
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
