import type { WakeSignal } from './wake-signal.ts';

/**
 * A lane of a pipelined relay (RelayOptions.lanes): a serial claim → produce → mark →
 * commit loop over a fixed part of the replica's shards, on its own transaction.
 *
 * Why lanes and not "claim batch N+1 while N is in flight" over the same shards: the
 * claim's shard lock (pg_try_advisory_xact_lock) belongs to N's session until N
 * commits, so a second transaction cannot claim those shards; and a claim that commits
 * a lease instead would add a write per row. Disjoint shards need neither, and they make
 * FIFO a matter of construction: an aggregate's rows are all in one shard, so in one
 * lane, which relays them one batch after the other exactly as the serial relay does.
 * When a lane's batch fails (its transaction rolls back, or its rows are marked failed
 * and hold back their aggregates) no other lane holds a row of those aggregates.
 */
export interface Lane {
  index: number;
  /** Cut short by a notification, a busy lane's nudge (while idle) and stop. */
  wake: WakeSignal;
  /** Why the lane is waiting, if it is: nothing found, or a failed tick's backoff. */
  waiting: 'idle' | 'backoff' | undefined;
}

/** Most lanes a relay takes: more would only queue for the one producer. */
export const MAX_LANES = 8;

export function laneCount(lanes: number | undefined): number {
  const count = lanes ?? 1;
  if (!Number.isInteger(count) || count < 1 || count > MAX_LANES)
    throw new RangeError(`lanes must be an integer from 1 to ${MAX_LANES}, got ${String(lanes)}`);
  return count;
}

/** The lane's part of the replica's shards: every `count`-th, from its index. */
export function laneShards(shards: number[], lane: number, count: number): number[] {
  return count === 1 ? shards : shards.filter((_, k) => k % count === lane);
}

/**
 * One send at a time on the producer, in the order asked. The relay's producer is
 * idempotent with one request in flight, and kafkajs numbers a partition's batches
 * when it builds the request: two sends in flight to one partition could carry the same
 * sequence number, and the broker would take the second for a duplicate of the first
 * and drop it while acking it. Taking turns keeps every send alone on the producer (so
 * also the renewal after an unknown outcome, which happens inside the turn), while the
 * other lanes' database work goes on: the pipeline overlaps PostgreSQL with Kafka, not
 * Kafka with itself.
 */
export class SendTurn {
  private last: Promise<unknown> = Promise.resolve();

  run<T>(send: () => Promise<T>): Promise<T> {
    const turn = this.last.then(send, send);
    this.last = turn.catch(() => undefined);
    return turn;
  }
}
