import { createServer } from 'node:net';
import { join } from 'node:path';
import {
  audit,
  demoTopics,
  FAILURE_POINT_NAMES,
  FailurePoints,
  type AuditReport,
} from '@outbox/lab';
import { setTrafficRate, startSystem, type System } from '@outbox/demo';
import { findRepoRoot, startStack, stopStack, type StackOptions } from '@outbox/dev-stack';
import pg from 'pg';
import type { FaultProxyStats } from '@outbox/fault-proxy';
import { backlog, waitDrained, type Backlog } from './drain.ts';
import { inject } from './faults.ts';
import { SoakLinks } from './links.ts';
import { checkTopic, type TopicCheck } from './topic-check.ts';
import { ProgressWatch, sampleProgress, type Stall } from './watch.ts';
import {
  describeFault,
  FAULT_KINDS,
  faultSchedule,
  type FaultKind,
  type ScheduledFault,
} from './schedule.ts';

export interface SoakOptions {
  minutes: number;
  seed: number;
  /** Orders per second (default 100; each paid or cancelled now and then: ~1.7 events per order). */
  rate?: number;
  /** Mean seconds between faults (default 20). */
  faultEverySeconds?: number;
  /** Only these fault kinds (default every kind). */
  kinds?: readonly FaultKind[] | undefined;
  /** How long the system may take to drain once traffic stops (default 300 s). */
  drainTimeoutSeconds?: number;
  /** The soak's own stack (default `<repo>/.data/soak`): restarts never touch the shared one. */
  dataDir?: string;
  /** Leave the soak's PostgreSQL and broker running afterwards (for inspection). */
  keepStack?: boolean;
  log?: (line: string) => void;
}

export interface SoakReport {
  seed: number;
  minutes: number;
  rate: number;
  schedule: (ScheduledFault & { outcome: string; atActualMs: number })[];
  /** Faults injected, per kind. */
  injected: Record<FaultKind, number>;
  /** Faults skipped (their part was held by an earlier fault, or down) or failed, per kind. */
  skipped: Record<FaultKind, number>;
  failed: Record<FaultKind, number>;
  /** The fault proxies' counters (links accepted and reset, bytes each way and dropped). */
  proxies: Record<string, FaultProxyStats>;
  /** How often each failure point really fired (from failure_points.fired). */
  fired: Record<string, number>;
  /** Restarts of each process by the supervisor. */
  restarts: Record<string, number>;
  traffic: { sent: number; failed: number };
  /** Events the orders produced (outbox rows), all relayed by the end. */
  events: number;
  /** From the traffic's stop until every fault still on had ended (0 when none was). */
  faultsOverMs: number;
  /** From then (traffic stopped, every fault over) until nothing was on its way. */
  drainMs: number;
  drained: boolean;
  /** Times the relay or the consumer moved nothing for a minute while work waited. */
  stalls: Stall[];
  /** What was still on its way when the drain ended (all 0 when drained). */
  backlog: Backlog | undefined;
  /** The topic read end to end against the outbox (undefined if it could not be read). */
  topic: TopicCheck | undefined;
  audit: AuditReport;
  /** The invariants the issue asks for, each true when it holds. */
  checks: Record<string, boolean>;
  ok: boolean;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The chaos soak: the whole backend (order-api, two sharded publisher-workers, the
 * consumer with its inbox) on a PostgreSQL and a broker of its own, steady traffic in
 * outbox mode, and a seeded schedule of faults from inside (failure points), from
 * outside (SIGKILL, SIGSTOP, broker and PostgreSQL restarts and outages) and on one
 * service's link (fault proxies: lost answers, silent links, slow links). Then traffic
 * stops, the system drains, the topic is read against the outbox, and the auditor
 * judges. The schedule is a function of the seed; what the traffic contains and how
 * the faults interleave with it are not.
 */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const rate = options.rate ?? 100;
  const durationMs = Math.round(options.minutes * 60_000);
  const root = findRepoRoot();
  const dataDir = options.dataDir ?? join(root, '.data', 'soak');
  // Its own PostgreSQL and broker (same jar cache): restarting them disturbs nobody.
  const env = { ...process.env, DATABASE_URL: '', KAFKA_BROKERS: '' };
  const stack: StackOptions = {
    dataDir,
    kafkaLibsDir: join(root, '.data', 'kafka', 'libs'),
    env,
    log: (line) => log(`  [stack] ${line}`),
  };
  // startSystem() takes its stack from the environment (OUTBOX_DATA_DIR): point it here.
  process.env.OUTBOX_DATA_DIR = dataDir;
  process.env.OUTBOX_KAFKA_LIBS_DIR = stack.kafkaLibsDir;
  delete process.env.DATABASE_URL;
  delete process.env.KAFKA_BROKERS;

  const endpoints = await startStack(stack);
  const admin = new pg.Client({ connectionString: endpoints.databaseUrl });
  await admin.connect();
  await admin.query('DROP SCHEMA IF EXISTS soak CASCADE');
  await admin.end();

  const schedule = faultSchedule({
    seed: options.seed,
    durationMs,
    meanGapMs: (options.faultEverySeconds ?? 20) * 1_000,
    ...(options.kinds ? { kinds: options.kinds } : {}),
  });
  log(
    `soak: seed ${options.seed}, ${options.minutes} min at ${rate} orders/s, ${schedule.length} faults scheduled`,
  );
  for (const f of schedule) log(`  t+${(f.atMs / 1000).toFixed(1)}s  ${describeFault(f)}`);
  // In this process, before the services start: their links to PostgreSQL and Kafka
  // go through these from the first connection on.
  let links: SoakLinks | undefined;

  const ports = {
    orderApi: await freePort(),
    worker1: await freePort(),
    worker2: await freePort(),
    consumer: await freePort(),
    dashboard: await freePort(),
  };
  let system: System | undefined;
  const overs: Promise<void>[] = [];
  let watch: ProgressWatch | undefined;
  try {
    links = await SoakLinks.start(endpoints);
    system = await startSystem({
      schema: 'soak',
      topicPrefix: `soak-${options.seed}-${Date.now()}.`,
      ports,
      dashboard: false,
      env: { LOG_LEVEL: 'info' },
      processEnv: links.processEnv(),
      logDir: join(dataDir, 'logs', 'services'),
      log: (line) => log(`  [system] ${line}`),
    });
    await system.waitReady();
    const { pool } = system;
    const failurePoints = new FailurePoints(pool);
    // Outbox mode, inbox on, sharded workers: the configuration the guarantees are for.
    await pool.query(
      `INSERT INTO demo_settings (key, value) VALUES ('order_mode', '"outbox"')
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    );
    for (const name of FAILURE_POINT_NAMES) await failurePoints.arm(name, { mode: 'off' });

    // The rate lives in demo_settings (the demo follows it); set it directly as well,
    // since the follower's LISTEN does not survive the PostgreSQL restart.
    await setTrafficRate(pool, rate);
    system.traffic.setRate(rate);
    const started = Date.now();
    const done: SoakReport['schedule'] = [];
    const ctx = { system, failurePoints, stack, links, busy: new Set<string>(), log };
    watch = new ProgressWatch({
      sample: () => sampleProgress(pool),
      clock: () => Date.now() - started,
      recentFaults: (from, until) =>
        done
          .filter((f) => f.outcome === 'injected' && f.atActualMs >= from && f.atActualMs <= until)
          .map((f) => `t+${(f.atActualMs / 1000).toFixed(0)}s ${describeFault(f)}`),
      // With the broker or PostgreSQL itself down nobody can move.
      excused: () => ctx.busy.has('kafka') || ctx.busy.has('postgres'),
      log,
    });
    watch.start();
    for (const fault of schedule) {
      const wait = started + fault.atMs - Date.now();
      if (wait > 0) await sleep(wait);
      const at = Date.now() - started;
      log(`t+${(at / 1000).toFixed(1)}s  ${describeFault(fault)}`);
      const outcome = await inject(ctx, fault).then(
        ({ outcome, over }) => {
          overs.push(
            over.catch((error: unknown) => log(`  ${fault.kind}: ending failed: ${String(error)}`)),
          );
          return outcome;
        },
        (error: unknown) => {
          log(`  fault failed: ${String(error)}`);
          return 'failed' as const;
        },
      );
      done.push({ ...fault, outcome, atActualMs: at });
      // After an external fault the traffic generator keeps going on its own; the rate
      // setting is re-applied in case a restart reset anything.
      system.traffic.setRate(rate);
    }
    const rest = started + durationMs - Date.now();
    if (rest > 0) await sleep(rest);

    log('traffic stops; ending the faults still on, disarming the failure points, draining');
    system.traffic.setRate(0);
    await setTrafficRate(pool, 0).catch(() => undefined);
    const stopAt = Date.now();
    await sleep(2_000); // requests in flight
    // A silent link or an outage that began near the end is over within its time.
    await Promise.all(overs);
    links.passAll();
    const drainFrom = Date.now();
    for (const name of FAILURE_POINT_NAMES) {
      await failurePoints.arm(name, { mode: 'off' }).catch(() => undefined);
    }
    await system
      .waitReady(180_000)
      .catch((error: unknown) => log(`  not all healthy: ${String(error)}`));
    const drain = await waitDrained(pool, (options.drainTimeoutSeconds ?? 300) * 1_000, log);
    const drainMs = Date.now() - drainFrom;
    const stalls = watch.stop();
    const drained = drain.last?.pending === 0 && drain.last.undelivered === 0;
    if (!drained) log(`  not drained: ${JSON.stringify(drain.last ?? (await backlog(pool)))}`);

    const topic = await checkTopic(
      system.kafkaBrokers,
      demoTopics(system.topicPrefix).orders,
      pool,
    ).catch((error: unknown) => {
      log(`  topic check failed: ${String(error)}`);
      return undefined;
    });
    if (topic?.sentNotOnTopic)
      log(
        `  marked sent but not on the topic: ${topic.sentNotOnTopic} (e.g. ${topic.examples.join(', ')})`,
      );
    const report = await audit(pool);
    const events = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox');
    const firedRows = await pool.query<{ name: string; fired: number }>(
      'SELECT name, fired FROM failure_points',
    );
    const perKind = () =>
      Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
    const injected = perKind();
    const skipped = perKind();
    const failed = perKind();
    for (const f of done) {
      const counts =
        f.outcome === 'injected' ? injected : f.outcome === 'skipped' ? skipped : failed;
      counts[f.kind] += 1;
    }
    const checks = {
      'drained (0 pending, every sent event delivered)': drained,
      '0 events lost (every row marked sent is on the topic)': topic?.sentNotOnTopic === 0,
      '0 orders without events': report.ordersWithoutEvents === 0,
      '0 phantom events': report.phantomEvents === 0,
      '0 double-processed': report.doubleProcessed === 0,
      '0 FIFO violations': report.fifoViolations === 0,
      '0 pending': report.pending === 0,
      'every reservation matches its order': report.reservationMismatches === 0,
      '0 dead-lettered (nothing valid parked)':
        report.consumerDeadLettered === 0 && report.outboxDeadLettered === 0,
    };
    return {
      seed: options.seed,
      minutes: options.minutes,
      rate,
      schedule: done,
      injected,
      skipped,
      failed,
      proxies: links.stats(),
      fired: Object.fromEntries(firedRows.rows.map((r) => [r.name, r.fired])),
      restarts: Object.fromEntries(system.supervisor.status().map((s) => [s.name, s.restarts])),
      traffic: { sent: system.traffic.sent, failed: system.traffic.failed },
      events: events.rows[0]?.n ?? 0,
      faultsOverMs: drainFrom - stopAt,
      drainMs,
      drained,
      stalls,
      backlog: drain.last,
      topic,
      audit: report,
      checks,
      ok: Object.values(checks).every(Boolean),
    };
  } finally {
    watch?.stop();
    // Nothing may stay frozen or silent while the processes are asked to stop.
    await Promise.all(overs);
    links?.passAll();
    await system?.stop().catch((error: unknown) => log(`system stop: ${String(error)}`));
    await links?.close();
    if (!options.keepStack) await stopStack({ ...stack, log: () => undefined });
  }
}

/** The report as the lines `npm run soak` prints. */
export function formatReport(r: SoakReport): string {
  const a = r.audit;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const faults = FAULT_KINDS.filter((k) => r.injected[k] + r.skipped[k] + r.failed[k] > 0);
  const lines = [
    '',
    `soak report: seed ${r.seed}, ${r.minutes} min, ${r.rate} orders/s`,
    `  orders sent ${r.traffic.sent} (${r.traffic.failed} requests failed during faults), orders in the database ${a.orders}, events ${r.events}`,
    `  faults (injected / skipped / failed), ${r.schedule.length} in all:`,
    ...faults.map((k) => `    ${k.padEnd(38)} ${r.injected[k]} / ${r.skipped[k]} / ${r.failed[k]}`),
    `  failure points fired: ${
      Object.entries(r.fired)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || 'none'
    }`,
    `  supervisor restarts: ${Object.entries(r.restarts)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
    '  fault proxies (links accepted, bytes up / down / dropped):',
    ...Object.entries(r.proxies).map(
      ([k, p]) =>
        `    ${k.padEnd(38)} ${p.linksAccepted} links, ${p.bytesUp} / ${p.bytesDown} / ${p.bytesDropped} B`,
    ),
    `  duplicates delivered ${a.duplicatesDelivered}, caught by the inbox ${a.duplicatesCaught}`,
    r.topic
      ? `  topic read end to end: ${r.topic.messages} messages; of ${r.topic.sent} rows marked sent, ${r.topic.sentNotOnTopic} not on the topic`
      : '  topic read end to end: could not be read',
    `  lost ${r.topic?.sentNotOnTopic ?? '?'} (marked sent, not on the topic), orders without events ${a.ordersWithoutEvents}, phantom ${a.phantomEvents}, double-processed ${a.doubleProcessed}, FIFO violations ${a.fifoViolations}`,
    ...(r.stalls.length
      ? r.stalls.map(
          (st) =>
            `  STALL: the ${st.who} moved nothing from t+${seconds(st.sinceMs)} ${st.untilMs === undefined ? 'to the end' : `to t+${seconds(st.untilMs)}`} while work waited; faults in the minute before: ${st.after.join('; ') || 'none'}`,
        )
      : [
          '  no stall: the relay and the consumer never went a minute without progress while work waited',
        ]),
    `  still on its way at the end: ${r.backlog ? `${r.backlog.pending} pending in the outbox, ${r.backlog.undelivered} sent but not applied by the consumer` : 'unknown (the database did not answer)'}`,
    `  faults still on when traffic stopped ended ${seconds(r.faultsOverMs)} later (2 s of it for requests in flight); then drained in ${seconds(r.drainMs)}${r.drained ? '' : ' (NOT drained: timed out)'}`,
    '  audit:',
    ...Object.entries(a).map(([k, v]) => `    ${k.padEnd(24)} ${String(v)}`),
    '  checks:',
    ...Object.entries(r.checks).map(([k, ok]) => `    ${ok ? 'ok  ' : 'FAIL'} ${k}`),
    r.ok ? 'soak: PASSED' : 'soak: FAILED',
  ];
  return lines.join('\n');
}
