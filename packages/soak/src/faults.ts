import { FailurePoint, type FailurePoints } from '@outbox/core';
import type { System } from '@outbox/demo';
import { restartKafka, restartPostgres, type StackOptions } from '@outbox/dev-stack';
import type { ScheduledFault } from './schedule.ts';

export interface FaultContext {
  system: System;
  failurePoints: FailurePoints;
  /** The soak's own stack (data dir), which the broker and database restarts act on. */
  stack: StackOptions;
  log: (line: string) => void;
}

/** What happened to one scheduled fault. */
export type FaultOutcome = 'injected' | 'skipped';

/** SIGKILL of a supervised process's whole group, from outside: no handler runs, nothing is flushed. */
function sigkill(ctx: FaultContext, name: string): FaultOutcome {
  const status = ctx.system.supervisor.status().find((s) => s.name === name);
  if (!status?.pid || status.state !== 'up') {
    ctx.log(`  ${name} is ${status?.state ?? 'unknown'}: nothing to kill`);
    return 'skipped';
  }
  try {
    process.kill(-status.pid, 'SIGKILL');
  } catch {
    process.kill(status.pid, 'SIGKILL');
  }
  return 'injected';
}

/** Injects one fault; the broker and database restarts resolve once the part is back. */
export async function inject(ctx: FaultContext, fault: ScheduledFault): Promise<FaultOutcome> {
  switch (fault.kind) {
    case 'worker.kill_mid_publish':
      await ctx.failurePoints.arm(FailurePoint.workerKillMidPublish, { mode: 'once' });
      return 'injected';
    case 'consumer.crash_before_offset_commit':
      await ctx.failurePoints.arm(FailurePoint.consumerCrashBeforeOffsetCommit, { mode: 'once' });
      return 'injected';
    case 'worker.kafka_outage':
      await ctx.failurePoints.arm(FailurePoint.workerKafkaOutage, {
        mode: 'on',
        params: { until: Date.now() + fault.param * 1_000, seconds: fault.param },
      });
      return 'injected';
    case 'worker.sigkill':
      return sigkill(ctx, `publisher-worker-${fault.param}`);
    case 'consumer.sigkill':
      return sigkill(ctx, 'inventory-consumer');
    case 'order-api.sigkill':
      return sigkill(ctx, 'order-api');
    case 'kafka.restart':
      await restartKafka({ ...ctx.stack, signal: 'SIGKILL' });
      return 'injected';
    case 'postgres.restart':
      await restartPostgres({ ...ctx.stack, mode: 'immediate' });
      return 'injected';
  }
}
