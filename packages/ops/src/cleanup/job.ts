import type { Pool } from 'pg';
import { isPartitioned } from '../partitions/catalog.ts';
import { maintainPartitions, type MaintainResult } from '../partitions/maintain.ts';
import { deleteInBatches, type RetentionResult } from './retention.ts';

export interface RetentionPolicy {
  /** Sent outbox events are kept this long, for audit and replay (the seed: 7 days). */
  outboxSeconds: number;
  /**
   * Inbox markers are kept this long. Never shorter than the outbox's: a replay can
   * re-publish anything still in the outbox, and the inbox must still recognise it.
   */
  inboxSeconds: number;
  batchSize?: number;
  /** Partitioned layout: daily partitions kept ready ahead (default 7). */
  daysAhead?: number;
}

export interface RunReport {
  layout: 'partitioned' | 'plain';
  outbox: RetentionResult;
  inbox: RetentionResult;
  partitions?: MaintainResult;
}

/** Throws when a policy could let a replayed event through the inbox twice. */
export function checkPolicy(policy: RetentionPolicy): void {
  if (!(policy.outboxSeconds > 0) || !(policy.inboxSeconds > 0))
    throw new Error('retention periods must be positive');
  if (policy.inboxSeconds < policy.outboxSeconds) {
    throw new Error(
      'inbox retention must be at least the outbox retention: a replay of an event the inbox forgot would apply it twice',
    );
  }
}

/** One cleanup pass: partitions (when the outbox is partitioned) or batched DELETEs, then the inbox. */
export async function runRetention(
  pool: Pool,
  policy: RetentionPolicy,
  shouldStop?: () => boolean,
): Promise<RunReport> {
  checkPolicy(policy);
  const batch = {
    batchSize: policy.batchSize ?? 1_000,
    ...(shouldStop ? { shouldStop } : {}),
  };
  if (await isPartitioned(pool)) {
    const partitions = await maintainPartitions(pool, {
      retentionSeconds: policy.outboxSeconds,
      daysAhead: policy.daysAhead ?? 7,
    });
    // Daily partitions go whole; only the DEFAULT catch-all needs row deletes.
    const outbox = await deleteInBatches(pool, 'outbox_default', {
      ...batch,
      olderThanSeconds: policy.outboxSeconds,
    });
    const inbox = await deleteInBatches(pool, 'inbox', {
      ...batch,
      olderThanSeconds: policy.inboxSeconds,
    });
    return { layout: 'partitioned', outbox, inbox, partitions };
  }
  const outbox = await deleteInBatches(pool, 'outbox', {
    ...batch,
    olderThanSeconds: policy.outboxSeconds,
  });
  const inbox = await deleteInBatches(pool, 'inbox', {
    ...batch,
    olderThanSeconds: policy.inboxSeconds,
  });
  return { layout: 'plain', outbox, inbox };
}

export interface RetentionJobOptions {
  intervalMs?: number;
  onRun?: (report: RunReport) => void;
  onError?: (error: unknown) => void;
}

/**
 * The optional background job: runRetention every `intervalMs` (default 1 h), in any
 * process that has a pool (`npm run ops -- daemon`, or a service that opts in). A failed
 * pass is reported and retried at the next interval, never fatal. `stop()` ends the
 * pass in flight at its next batch and is safe to call twice.
 */
export class RetentionJob {
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly policy: RetentionPolicy,
    private readonly options: RetentionJobOptions = {},
  ) {
    checkPolicy(policy);
  }

  start(): void {
    this.loop ??= this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        const report = await runRetention(this.pool, this.policy, () => this.stopping);
        this.options.onRun?.(report);
      } catch (error) {
        this.options.onError?.(error);
      }
      if (this.stopping) break;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, this.options.intervalMs ?? 3_600_000);
      });
    }
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping = true;
      clearTimeout(this.timer);
      this.wake?.();
      await this.loop;
    })();
    return this.stopped;
  }
}
