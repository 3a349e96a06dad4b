import { backoffMs, createLogger, createPool } from '@outbox/core';
import { exitOnStartupSignal, maskUrl, onShutdown, migrateLab } from '@outbox/lab';
import { isLoopbackHost, loadConfig } from './config.ts';
import { startDashboard } from './server.ts';

/**
 * dashboard-api: migrate (serialised by core), derive the stats, listen. SIGTERM /
 * SIGINT: stop ticking, close the sockets and the pool; a second signal exits at once.
 */
const config = loadConfig(process.env);
const log = createLogger('dashboard-api', config.LOG_LEVEL);
// Until `onShutdown` below, a signal (or the supervisor's death) exits at once: the
// dashboard answers /healthz while it derives its counters, so the demo reports it up
// before `onShutdown` is armed.
const disarmStartupSignal = exitOnStartupSignal(log);
// A tick runs its ~9 small queries on at most 5 connections: PostgreSQL's
// connections are shared with every service (and, in tests, with other suites).
const pool = createPool(config, log, { max: 5 });

// PostgreSQL may be starting, or out of connections for a moment (it is shared):
// retry the first contact for a while instead of exiting into a restart loop.
for (let attempt = 1; ; attempt += 1) {
  try {
    await migrateLab(pool);
    break;
  } catch (error) {
    if (attempt >= 10) throw error;
    const delay = backoffMs(attempt + 1, 250, 5_000);
    log.warn({ err: error, attempt, delay }, 'migration failed; retrying');
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
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
    prometheus: config.PROMETHEUS_URL ?? 'none',
  },
  `listening on ${config.HOST}:${dashboard.port}`,
);

disarmStartupSignal();
onShutdown(log, {
  message: 'stopping',
  timeoutMs: 10_000,
  timeoutMessage: 'did not stop in 10 s; exiting',
  steps: [() => dashboard.close(), () => pool.end()],
});
