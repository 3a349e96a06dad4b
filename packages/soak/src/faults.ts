import { setTimeout as sleep } from 'node:timers/promises';
import { FailurePoint, type FailurePoints } from '@outbox/lab';
import type { System } from '@outbox/demo';
import { restartKafka, restartPostgres, type StackOptions } from '@outbox/dev-stack';
import type { FaultMode } from '@outbox/fault-proxy';
import type { LinkKind, ProxiedProcess, SoakLinks } from './links.ts';
import type { ScheduledFault } from './schedule.ts';

export interface FaultContext {
  system: System;
  failurePoints: FailurePoints;
  /** The soak's own stack (data dir), which the broker and database restarts act on. */
  stack: StackOptions;
  /** The fault proxies on the workers' and the consumer's links. */
  links: SoakLinks;
  /**
   * The parts a fault still holds ('postgres', 'kafka', a link, a stopped process):
   * a second fault on a held part is skipped, so that two faults never undo each other
   * (a link set back to pass by one while another still black-holes it).
   */
  busy: Set<string>;
  log: (line: string) => void;
}

/** What happened to one scheduled fault. */
export type FaultOutcome = 'injected' | 'skipped';

export interface Injection {
  outcome: FaultOutcome;
  /** Settles once the fault is over and its part restored (at once for an instant fault). */
  over: Promise<void>;
}

const skipped = (ctx: FaultContext, why: string): Injection => {
  ctx.log(`  skipped: ${why}`);
  return { outcome: 'skipped', over: Promise.resolve() };
};
const instant: Injection = { outcome: 'injected', over: Promise.resolve() };

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    process.kill(pid, signal);
  }
}

/** The pid of a supervised process that is up, or undefined. */
function upPid(ctx: FaultContext, name: string): number | undefined {
  const status = ctx.system.supervisor.status().find((s) => s.name === name);
  return status?.state === 'up' && status.pid ? status.pid : undefined;
}

/** SIGKILL of a supervised process's whole group, from outside: no handler runs, nothing is flushed. */
function sigkill(ctx: FaultContext, name: string): Injection {
  const pid = upPid(ctx, name);
  if (!pid) return skipped(ctx, `${name} is not up: nothing to kill`);
  signalGroup(pid, 'SIGKILL');
  return instant;
}

/**
 * Holds `part` for `seconds`: `start` now, `end` once the time is up (whatever else
 * happened meanwhile). Skipped when another fault holds the part.
 */
async function hold(
  ctx: FaultContext,
  part: string,
  seconds: number,
  start: () => unknown,
  end: () => unknown,
): Promise<Injection> {
  if (ctx.busy.has(part)) return skipped(ctx, `${part} is held by an earlier fault`);
  ctx.busy.add(part);
  try {
    await start();
  } catch (error) {
    ctx.busy.delete(part);
    throw error;
  }
  const over = (async () => {
    try {
      await sleep(seconds * 1_000);
      await end();
    } finally {
      ctx.busy.delete(part);
    }
  })();
  return { outcome: 'injected', over };
}

/** A fault mode on one process's PostgreSQL or Kafka link for `seconds`, then pass. */
function onLink(
  ctx: FaultContext,
  name: ProxiedProcess,
  link: LinkKind,
  mode: FaultMode,
  seconds: number,
): Promise<Injection> {
  // A link to a server that is down carries nothing: the fault would be a no-op.
  const server = link === 'pg' ? 'postgres' : 'kafka';
  if (ctx.busy.has(server))
    return Promise.resolve(skipped(ctx, `${server} is down: its links carry nothing`));
  const proxies = ctx.links.proxies(name, link);
  return hold(
    ctx,
    `${name} ${link} link`,
    seconds,
    () => proxies.forEach((p) => p.setMode(mode)),
    () => {
      proxies.forEach((p) => p.setMode({ kind: 'pass' }));
      ctx.log(`  ${name}'s ${link} link passes again`);
    },
  );
}

/** A database-wide restart or outage: held as 'postgres' so two never overlap. */
function postgresDown(ctx: FaultContext, downMs: number): Promise<Injection> {
  if (ctx.busy.has('postgres')) return Promise.resolve(skipped(ctx, 'postgres is already down'));
  ctx.busy.add('postgres');
  const over = restartPostgres({ ...ctx.stack, mode: 'immediate', downMs })
    .then(() => ctx.log('  postgres is back'))
    .finally(() => ctx.busy.delete('postgres'));
  return Promise.resolve({ outcome: 'injected', over });
}

/**
 * Injects one fault and resolves once it has started; `over` settles when it has
 * ended. Faults overlap: a long one (an outage, a silent link) is still on when the
 * next begins, as faults combine outside a lab.
 */
export async function inject(ctx: FaultContext, fault: ScheduledFault): Promise<Injection> {
  const worker = `publisher-worker-${fault.replica}` as ProxiedProcess;
  // The failure points live in the database: with it down they cannot be armed.
  const needsDb = () => ctx.busy.has('postgres');
  switch (fault.kind) {
    case 'worker.kill_mid_publish':
      if (needsDb()) return skipped(ctx, 'postgres is down: cannot arm a failure point');
      await ctx.failurePoints.arm(FailurePoint.workerKillMidPublish, { mode: 'once' });
      return instant;
    case 'consumer.crash_before_offset_commit':
      if (needsDb()) return skipped(ctx, 'postgres is down: cannot arm a failure point');
      await ctx.failurePoints.arm(FailurePoint.consumerCrashBeforeOffsetCommit, { mode: 'once' });
      return instant;
    case 'worker.kafka_outage':
      if (needsDb()) return skipped(ctx, 'postgres is down: cannot arm a failure point');
      await ctx.failurePoints.arm(FailurePoint.workerKafkaOutage, {
        mode: 'on',
        params: { until: Date.now() + fault.seconds * 1_000, seconds: fault.seconds },
      });
      return instant;
    case 'worker.sigkill':
      return sigkill(ctx, worker);
    case 'consumer.sigkill':
      return sigkill(ctx, 'inventory-consumer');
    case 'order-api.sigkill':
      return sigkill(ctx, 'order-api');
    case 'worker.sigstop': {
      const pid = upPid(ctx, worker);
      if (!pid) return skipped(ctx, `${worker} is not up: nothing to stop`);
      return hold(
        ctx,
        `${worker} process`,
        fault.seconds,
        () => signalGroup(pid, 'SIGSTOP'),
        () => {
          // Killed (and restarted) meanwhile: the old group is gone, nothing to continue.
          try {
            signalGroup(pid, 'SIGCONT');
            ctx.log(`  ${worker} (pid ${pid}) continued`);
          } catch {
            ctx.log(`  ${worker} (pid ${pid}) is gone: nothing to continue`);
          }
        },
      );
    }
    case 'worker.kafka_drop_responses':
      // The relay produces only what it claimed: with PostgreSQL down there is nothing
      // to answer, and the fault would drop nothing.
      if (ctx.busy.has('postgres'))
        return skipped(ctx, 'postgres is down: the relay sends nothing');
      return onLink(ctx, worker, 'kafka', { kind: 'drop-responses' }, fault.seconds);
    case 'worker.kafka_black_hole':
      return onLink(ctx, worker, 'kafka', { kind: 'black-hole' }, fault.seconds);
    case 'worker.pg_black_hole':
      return onLink(ctx, worker, 'pg', { kind: 'black-hole' }, fault.seconds);
    case 'worker.pg_slow':
      return onLink(ctx, worker, 'pg', { kind: 'delay', ms: fault.delayMs }, fault.seconds);
    case 'consumer.kafka_black_hole':
      return onLink(ctx, 'inventory-consumer', 'kafka', { kind: 'black-hole' }, fault.seconds);
    case 'consumer.pg_black_hole':
      return onLink(ctx, 'inventory-consumer', 'pg', { kind: 'black-hole' }, fault.seconds);
    case 'consumer.pg_slow':
      return onLink(
        ctx,
        'inventory-consumer',
        'pg',
        { kind: 'delay', ms: fault.delayMs },
        fault.seconds,
      );
    case 'kafka.restart': {
      if (ctx.busy.has('kafka')) return skipped(ctx, 'the broker is already restarting');
      ctx.busy.add('kafka');
      const over = restartKafka({ ...ctx.stack, signal: 'SIGKILL' })
        .then(() => ctx.log('  the broker is back'))
        .finally(() => ctx.busy.delete('kafka'));
      return { outcome: 'injected', over };
    }
    case 'postgres.restart':
      return postgresDown(ctx, 0);
    case 'postgres.outage':
      return postgresDown(ctx, fault.seconds * 1_000);
  }
}
