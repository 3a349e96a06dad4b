import { parseArgs } from 'node:util';
import { audit, demoTopics, maskUrl } from '@outbox/lab';
import { commandLine } from '@outbox/dev-stack';
import { startSystem } from './system.ts';
import { setTrafficRate } from './traffic-setting.ts';

/**
 * The README's demo command: PostgreSQL and Kafka (dev-stack), migrations, seeded
 * inventory, then order-api, two publisher-worker replicas, inventory-consumer and the
 * dashboard under a supervisor that restarts what dies. Ctrl-C stops everything.
 * Options and environment: USAGE below (`--help`).
 */
const USAGE = `usage: npm run demo -- [--rate N] [--seconds N]

Starts PostgreSQL and Kafka (dev-stack), migrates, seeds the inventory, then order-api,
two publisher-worker replicas, inventory-consumer and the dashboard under a supervisor.
  --rate N      orders/s of generated traffic (default 0; the dashboard changes it later)
  --seconds N   stop after N seconds and print the audit (default: until Ctrl-C)
Environment: DATABASE_SCHEMA, TOPIC_PREFIX (a second demo beside the first), DEMO_PORT
(the dashboard's port, default 3000; the services take the next four).`;
const cli = commandLine('demo', USAGE, process.argv.slice(2));
const { values } = cli.parse(() =>
  parseArgs({
    args: process.argv.slice(2),
    options: { rate: { type: 'string', default: '0' }, seconds: { type: 'string' } },
  }),
);
const rate = Number(values.rate);
const seconds = values.seconds === undefined ? undefined : Number(values.seconds);
if (!Number.isFinite(rate) || rate < 0)
  cli.fail(`--rate must be a number ≥ 0 (got "${values.rate}")`);
if (seconds !== undefined && !(seconds > 0))
  cli.fail(`--seconds must be a number > 0 (got "${values.seconds}")`);
const log = (line: string) => process.stdout.write(`[demo] ${line}\n`);

const portBase = Number(process.env.DEMO_PORT ?? 3000);
const system = await startSystem({
  log,
  ...(process.env.DATABASE_SCHEMA ? { schema: process.env.DATABASE_SCHEMA } : {}),
  ...(process.env.TOPIC_PREFIX ? { topicPrefix: process.env.TOPIC_PREFIX } : {}),
  ports: {
    dashboard: portBase,
    orderApi: portBase + 1,
    worker1: portBase + 2,
    worker2: portBase + 3,
    consumer: portBase + 4,
  },
});
log(`PostgreSQL  ${maskUrl(system.databaseUrl)}`);
log(
  `Kafka       ${system.kafkaBrokers.join(',')} (topic ${demoTopics(system.topicPrefix).orders})`,
);
await system.waitReady().catch((error: Error) => log(error.message));
if (system.urls.dashboard) log(`dashboard   ${system.urls.dashboard}   ← open this`);
log(`order-api   ${system.urls.orderApi}  (POST /orders, GET /orders/:id, /metrics)`);
log(`workers     ${system.urls.workers.map((u) => `${u}/metrics`).join('  ')}`);
log(`consumer    ${system.urls.consumer}/metrics`);
log(`logs        ${system.logDir}`);
log('failure points: npm run chaos -- list | arm <name> [once|times N|on|off] [--seconds N]');
// The rate is a demo setting, so the dashboard sees (and can change) what --rate asked.
await setTrafficRate(system.pool, rate);

let stopping: Promise<void> | undefined;
async function shutdown(reason: string): Promise<void> {
  stopping ??= (async () => {
    log(`stopping (${reason})…`);
    system.traffic.stop();
    const report = await audit(system.pool, { settleSeconds: 5 }).catch(() => undefined);
    if (report) log(`audit: ${JSON.stringify(report)}`);
    await system.stop();
    log('stopped. PostgreSQL and Kafka keep running: npm run stack -- down stops them.');
  })();
  return stopping;
}
let signals = 0;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    signals += 1;
    if (signals > 1) process.exit(130);
    void shutdown(signal).then(() => process.exit(0));
  });
}
if (seconds !== undefined)
  setTimeout(
    () => void shutdown(`--seconds ${seconds}`).then(() => process.exit(0)),
    seconds * 1000,
  );
