import type { Pool } from 'pg';
import { heartbeatSharded, leaveMembership, recordShards } from './sql.ts';
import { resolveRelayTimings } from './timings.ts';

/** Number of virtual shards; must match the `shard` column of the outbox migration. */
export const SHARD_COUNT = 64;

export interface ShardAssignerOptions {
  replicaId: string;
  /**
   * How long this replica's heartbeat lasts: written into its row, where its peers read
   * it (default: the relay's default membership TTL, see relay/timings.ts).
   */
  ttlMs?: number;
  /** How often a replica refreshes its heartbeat and its view of the members. */
  heartbeatMs?: number;
}

/**
 * Divides the 64 shards among the live relay replicas without manual numbering:
 * each replica heartbeats into `outbox_relay_members`, sorts the live ids, and takes
 * the shards `s` with `s % liveCount === itsIndex`. A replica that dies stops
 * heartbeating and its shards pass to the others once the TTL it wrote has run out.
 *
 * This only decides who *tries* which shard. Safety comes from the per-shard
 * advisory lock each claim takes (see claimLockedShardBatch): while two replicas disagree about
 * the membership, they still cannot relay one shard at the same time.
 */
export class ShardAssigner {
  readonly replicaId: string;
  private readonly ttlMs: number;
  private readonly heartbeatMs: number;
  private lastBeat = 0;
  private current: number[] = [];
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;

  constructor(
    private readonly pool: Pool,
    options: ShardAssignerOptions,
  ) {
    this.replicaId = options.replicaId;
    this.ttlMs = options.ttlMs ?? resolveRelayTimings().memberTtlMs;
    this.heartbeatMs = options.heartbeatMs ?? 1_000;
  }

  /**
   * Heartbeats every heartbeatMs in the background from now on, so that a tick only
   * reads the shards (off the hot path: the two membership statements left the claim's
   * round trips). A failed beat keeps the last view: safety never rests on the view (the
   * claim's shard locks), and the next beat, or the TTL at the others, settles it.
   */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.beating ??= this.beat()
        .catch(() => undefined)
        .finally(() => (this.beating = undefined));
    }, this.heartbeatMs);
    this.timer.unref();
  }

  /** Stops the background heartbeat (leave() ends the membership). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
  }

  /**
   * The shards this replica should relay now. Started, the view the background beat
   * keeps (the first call beats if none has yet); not started, it beats inline at most
   * every heartbeatMs.
   */
  async shards(now = Date.now()): Promise<number[]> {
    if (this.current.length > 0 && (this.timer || now - this.lastBeat < this.heartbeatMs))
      return this.current;
    await this.beat(now);
    return this.current;
  }

  private async beat(now = Date.now()): Promise<void> {
    const { rows } = await this.pool.query<{ replica_id: string }>(
      heartbeatSharded(this.replicaId, this.ttlMs),
    );
    // The CTE's insert is not visible to the SELECT of the same statement: add self.
    const members = [...new Set([...rows.map((r) => r.replica_id), this.replicaId])].sort();
    const index = members.indexOf(this.replicaId);
    const count = members.length;
    this.current = Array.from({ length: SHARD_COUNT }, (_, s) => s).filter(
      (s) => s % count === index,
    );
    this.lastBeat = now;
    await this.pool.query(recordShards(this.replicaId, this.current));
  }

  /** Leaves the membership at shutdown, so the others take over at once. */
  async leave(): Promise<void> {
    await this.stop();
    await this.pool.query(leaveMembership(this.replicaId));
    this.current = [];
  }
}
