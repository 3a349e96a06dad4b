import { parseArgs } from 'node:util';
import { audit, demoTopics, maskUrl } from '@outbox/lab';
import { commandLine } from '@outbox/dev-stack';
import { demoPrometheus } from './prometheus.ts';
import { startSystem } from './system.ts';
import { DEMO_CLUSTER_DIR, startDemoCluster } from './demo-cluster.ts';
import { setTrafficRate } from './traffic-setting.ts';

/**
 * The README's demo command: PostgreSQL and Kafka (dev-stack), migrations, seeded
 * inventory, then order-api, two publisher-worker replicas, inventory-consumer and the
 * dashboard under a supervisor that restarts what dies. Ctrl-C stops everything.
 * Options and environment: USAGE below (`--help`).
 */
const USAGE = `usage: npm run demo -- [--rate N] [--seconds N] [--brokers 1|3] [--no-prometheus] [--tracing]

Starts PostgreSQL and Kafka (dev-stack), migrates, seeds the inventory, then order-api,
two publisher-worker replicas, inventory-consumer and the dashboard under a supervisor,
and Prometheus (Debian's package) scraping all of them with the alert rules of
packages/ops/alerts/outbox.rules.yml; the dashboard shows the alerts' state.
  --rate N          orders/s of generated traffic (default 0; the dashboard changes it later)
  --seconds N       stop after N seconds and print the audit (default: until Ctrl-C)
  --brokers 1|3     Kafka brokers (default 1, the dev-stack's). 3: a local KRaft cluster
                    in .data/demo-cluster (its own ports; stopped with the demo), the
                    topics with replication factor 3 and min.insync.replicas 2, and the
                    broker failure points: kill the partition leader, stop a follower,
                    kill the leader before replication (the acks = 1 lesson: npm run
                    chaos -- acks 1)
  --no-prometheus   do not start Prometheus (without it the dashboard shows no alert state)
  --tracing         OpenTelemetry traces of the services, sent to the dashboard, whose order
                    journey then shows each leg's time (commit → produce → consume →
                    reservation); off by default. To use your own collector instead, set
                    OTEL_EXPORTER_OTLP_ENDPOINT (the services inherit it; docs/tracing.md)
Prometheus comes from \`apt-get install -y prometheus\`, which the demo runs when it is
missing and it runs as root; otherwise it goes on without Prometheus and says so.
Environment: DATABASE_SCHEMA, TOPIC_PREFIX (a second demo beside the first), DEMO_PORT
(the dashboard's port, default 3000; the services take the next four), PROMETHEUS_URL
(an existing Prometheus for the dashboard's alert state: none is started; point it at
the services' /metrics and the rules file, see docs/operations.md).`;
const cli = commandLine('demo', USAGE, process.argv.slice(2));
const { values } = cli.parse(() =>
  parseArgs({
    args: process.argv.slice(2),
    options: {
      rate: { type: 'string', default: '0' },
      seconds: { type: 'string' },
      brokers: { type: 'string', default: '1' },
      'no-prometheus': { type: 'boolean', default: false },
      tracing: { type: 'boolean', default: false },
    },
  }),
);
const rate = Number(values.rate);
const seconds = values.seconds === undefined ? undefined : Number(values.seconds);
if (!Number.isFinite(rate) || rate < 0)
  cli.fail(`--rate must be a number ≥ 0 (got "${values.rate}")`);
if (seconds !== undefined && !(seconds > 0))
  cli.fail(`--seconds must be a number > 0 (got "${values.seconds}")`);
if (values.brokers !== '1' && values.brokers !== '3')
  cli.fail(`--brokers must be 1 or 3 (got "${values.brokers}")`);
const log = (line: string) => process.stdout.write(`[demo] ${line}\n`);

const portBase = Number(process.env.DEMO_PORT ?? 3000);
const prometheus = demoPrometheus({
  skip: values['no-prometheus'],
  existingUrl: process.env.PROMETHEUS_URL,
  log,
});
// Its own data dir and ports (.data/demo-cluster): never the soak's or a test's.
const cluster = values.brokers === '3' ? await startDemoCluster({ log }) : undefined;
const system = await startSystem({
  log,
  ...(cluster ? { cluster } : {}),
  ...(prometheus ? { prometheus } : {}),
  tracing: values.tracing,
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
if (cluster)
  log(
    `brokers     3 (KRaft, ${DEMO_CLUSTER_DIR}): replication factor 3, min.insync.replicas 2; ` +
      'the dashboard has "Kill the partition leader"; npm run chaos -- acks 1|all',
  );
await system.waitReady().catch((error: Error) => log(error.message));
if (system.urls.dashboard) log(`dashboard   ${system.urls.dashboard}   ← open this`);
log(`order-api   ${system.urls.orderApi}  (POST /orders, GET /orders/:id, /metrics)`);
log(`workers     ${system.urls.workers.map((u) => `${u}/metrics`).join('  ')}`);
log(`consumer    ${system.urls.consumer}/metrics`);
if (system.urls.prometheus)
  log(`prometheus  ${system.urls.prometheus}  (alerts: ${system.urls.prometheus}/alerts)`);
else if (process.env.PROMETHEUS_URL)
  log(`prometheus  ${process.env.PROMETHEUS_URL} (PROMETHEUS_URL; not started by the demo)`);
if (values.tracing)
  log(`tracing     spans → ${system.urls.dashboard ?? '?'}/v1/traces (the journey shows each leg)`);
else if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT)
  log(
    `tracing     spans → ${process.env.OTEL_EXPORTER_OTLP_ENDPOINT} (OTEL_EXPORTER_OTLP_ENDPOINT)`,
  );
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
    if (cluster) await cluster.stop();
    log('stopped. PostgreSQL and Kafka keep running: npm run stack -- down stops them.');
  })();
  return stopping;
}
// Ctrl-C reaches the demo more than once: the terminal signals the whole foreground
// process group, and the wrappers of `npm run demo` (npm, pnpm) pass it on to their
// child as well. An echo within ECHO_MS is the same request; a later signal forces the
// exit, but the services (in process groups of their own, out of the terminal's reach)
// are killed first: the demo never leaves them running. (Taking the echo for a second
// Ctrl-C left all five services behind, holding the demo's ports.)
const ECHO_MS = 3_000;
let firstSignalAt: number | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (firstSignalAt === undefined) {
      firstSignalAt = Date.now();
      void shutdown(signal).then(() => process.exit(0));
      return;
    }
    if (Date.now() - firstSignalAt < ECHO_MS) return;
    log(`${signal} again: killing every service now (SIGKILL)`);
    system.supervisor.killNow();
    for (const node of cluster?.nodes ?? []) {
      try {
        if (node.pid) process.kill(-node.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    process.exit(130);
  });
}
if (seconds !== undefined)
  setTimeout(
    () => void shutdown(`--seconds ${seconds}`).then(() => process.exit(0)),
    seconds * 1000,
  );
