import { outboxState } from '@outbox/core';
import type { Pool } from 'pg';

/** A time the relay or the consumer made no progress while work was waiting for it. */
export interface Stall {
  who: 'relay' | 'consumer';
  /** Milliseconds after traffic started: the last progress seen before it. */
  sinceMs: number;
  /** When progress was seen again (undefined: still stalled when the watch stopped). */
  untilMs: number | undefined;
  /** The faults injected in the minute before the last progress (what it may stem from). */
  after: string[];
}

/** What the watch reads each time. */
export interface ProgressSample {
  sent: number;
  pending: number;
  delivered: number;
  /** Something was sent later than the consumer's last delivery. */
  consumerBehind: boolean;
}

/** One sample from the soak's database. */
export async function sampleProgress(pool: Pool): Promise<ProgressSample> {
  const { rows } = await pool.query<ProgressSample>(
    `SELECT (SELECT count(*) FROM outbox WHERE sent_at IS NOT NULL)::int AS sent,
            (SELECT count(*) FROM outbox WHERE ${outboxState('pending')})::int AS pending,
            (SELECT COALESCE(max(id), 0) FROM consumer_deliveries)::int AS delivered,
            COALESCE((SELECT max(sent_at) FROM outbox) >
                     (SELECT COALESCE(max(received_at), '-infinity') FROM consumer_deliveries), false) AS "consumerBehind"`,
  );
  return rows[0]!;
}

/**
 * Watches the relay and the consumer from outside, through the database, while the
 * soak runs: a part that moves nothing for `thresholdMs` while work waits for it is
 * a stall, logged when it starts and ends. A silent stall (the process alive and
 * healthy, nothing moving) is the failure that the auditor alone would only show as
 * a backlog at the end. While `excused()` holds (the broker or PostgreSQL itself is
 * down, restarting) nobody can move: that time does not count towards a stall, but a
 * stall still dates from the last progress really seen (its cause may lie before).
 */
export class ProgressWatch {
  private timer: NodeJS.Timeout | undefined;
  private last: ProgressSample | undefined;
  private readonly progressAt = { relay: 0, consumer: 0 };
  /** Time spent excused since each part's last progress. */
  private readonly excusedMs = { relay: 0, consumer: 0 };
  private lastTickAt = 0;
  private readonly open = new Map<Stall['who'], Stall>();
  readonly stalls: Stall[] = [];

  constructor(
    private readonly options: {
      sample: () => Promise<ProgressSample>;
      /** Milliseconds since traffic started. */
      clock: () => number;
      /** The faults injected between two such times, described. */
      recentFaults: (fromMs: number, untilMs: number) => string[];
      excused: () => boolean;
      log: (line: string) => void;
      thresholdMs?: number;
    },
  ) {
    this.progressAt.relay = this.progressAt.consumer = this.lastTickAt = options.clock();
  }

  start(intervalMs = 5_000): void {
    let sampling = false;
    // One sample at a time: a slow database must not stack them up.
    this.timer = setInterval(() => {
      if (sampling) return;
      sampling = true;
      void this.tick().finally(() => (sampling = false));
    }, intervalMs);
  }

  stop(): Stall[] {
    clearInterval(this.timer);
    return this.stalls;
  }

  /** One look (the timer calls it; a test may too). */
  async tick(): Promise<void> {
    const now = this.options.clock();
    const elapsed = now - this.lastTickAt;
    this.lastTickAt = now;
    if (this.options.excused()) {
      this.excusedMs.relay += elapsed;
      this.excusedMs.consumer += elapsed;
      return;
    }
    const s = await this.options.sample().catch(() => undefined);
    if (!s) return;
    const prev = this.last;
    this.last = s;
    this.judge('relay', now, !prev || s.sent !== prev.sent, s.pending > 0);
    this.judge('consumer', now, !prev || s.delivered !== prev.delivered, s.consumerBehind);
  }

  private judge(who: Stall['who'], now: number, moved: boolean, waiting: boolean): void {
    const open = this.open.get(who);
    if (moved || !waiting) {
      this.progressAt[who] = now;
      this.excusedMs[who] = 0;
      if (open) {
        open.untilMs = now;
        this.open.delete(who);
        this.options.log(
          `  ${who} moves again (stalled ${((now - open.sinceMs) / 1000).toFixed(0)} s)`,
        );
      }
      return;
    }
    const threshold = this.options.thresholdMs ?? 60_000;
    if (open || now - this.progressAt[who] - this.excusedMs[who] < threshold) return;
    const since = this.progressAt[who];
    const stall: Stall = {
      who,
      sinceMs: since,
      untilMs: undefined,
      after: this.options.recentFaults(since - 60_000, since),
    };
    this.open.set(who, stall);
    this.stalls.push(stall);
    this.options.log(
      `  STALL: the ${who} has moved nothing since t+${(since / 1000).toFixed(1)}s while work waits (after: ${stall.after.join('; ') || 'no fault'})`,
    );
  }
}
