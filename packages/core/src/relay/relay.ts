import { randomUUID } from 'node:crypto';
import type { Producer } from 'kafkajs';
import type pg from 'pg';
import type { Pool, PoolClient } from 'pg';
import type { Logger } from 'pino';
import { withTransaction } from '../db/transaction.ts';
import { UnknownAggregateTypeError } from '../errors.ts';
import { silentLogger } from '../logger.ts';
import type { OutboxMetrics } from '../metrics/metrics.ts';
import { backoffMs } from './backoff.ts';
import {
  describeError,
  isProducerStateError,
  isRowError,
  produceRows,
  type RoutedRow,
} from './publish.ts';
import { ShardAssigner } from './sharding.ts';
import {
  claimBatch,
  claimShardBatch,
  lockShards,
  markFailed,
  markSent,
  type OutboxRow,
} from './sql.ts';
import { resolveTopic, type TopicMap } from './topics.ts';
import { WakeUpListener } from './wakeup.ts';

/** Points where a caller (the chaos layer, a test) can act inside a tick. */
export interface RelayHooks {
  /** After Kafka acknowledged `rows`, before they are marked sent: "kill mid-publish". */
  afterPublish?: (rows: OutboxRow[]) => Promise<void> | void;
}

export interface RelayOptions {
  pool: Pool;
  producer: Producer;
  /**
   * Replaces a producer whose idempotence state is broken (kafkajs cannot recover it):
   * create and connect a new one, dispose of the old one, return the new one. Called
   * after Kafka refused part of a multi-row batch, and on sequence-number errors.
   * Without it, such a producer keeps failing every produce to the partitions involved.
   */
  renewProducer?: (broken: Producer) => Promise<Producer>;
  topics: TopicMap;
  /** Client config for the LISTEN connection; without it the relay only polls. */
  listen?: pg.ClientConfig;
  /** Rows per claim (default 500). */
  batchSize?: number;
  /** Fallback poll when no notification arrives (default 5 s, the seed's). */
  pollIntervalMs?: number;
  /** Divide the 64 shards among replicas (FIFO per aggregate with N replicas). Default true. */
  sharded?: boolean;
  replicaId?: string;
  /** Failures of one row before it is dead-lettered (default 10). */
  maxAttempts?: number;
  /** Row backoff: base and cap, in seconds (default 1 s doubling to 5 min). */
  retryBaseSeconds?: number;
  retryMaxSeconds?: number;
  /** kafkajs request timeout for one produce (default 30 s). */
  produceTimeoutMs?: number;
  /** How long stop() waits for the batch in flight (default 30 s). */
  shutdownTimeoutMs?: number;
  metrics?: OutboxMetrics;
  hooks?: RelayHooks;
  log?: Logger;
}

/** What one tick did. */
export interface TickResult {
  claimed: number;
  sent: number;
  failed: number;
  heldBack: number;
}

/**
 * The outbox relay (the seed's publisher worker, batched): claim a batch with
 * FOR UPDATE SKIP LOCKED, produce it with acks = all, mark it sent in one UPDATE,
 * commit. Wakes on LISTEN/NOTIFY with a fallback poll. A failing row records its
 * error and backs off, holding back only the later events of its own aggregate.
 */
export class OutboxRelay {
  readonly replicaId: string;
  private readonly opts: Required<
    Pick<
      RelayOptions,
      | 'batchSize'
      | 'pollIntervalMs'
      | 'sharded'
      | 'maxAttempts'
      | 'retryBaseSeconds'
      | 'retryMaxSeconds'
      | 'produceTimeoutMs'
      | 'shutdownTimeoutMs'
    >
  >;
  private readonly log: Logger;
  private readonly assigner: ShardAssigner | undefined;
  private readonly listener: WakeUpListener | undefined;
  private stopping = false;
  private loop: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private woken = false;
  private producer: Producer;
  private lastCompletedTickAt: number | undefined;

  constructor(private readonly options: RelayOptions) {
    this.producer = options.producer;
    this.replicaId = options.replicaId ?? `relay-${randomUUID().slice(0, 8)}`;
    this.opts = {
      batchSize: options.batchSize ?? 500,
      pollIntervalMs: options.pollIntervalMs ?? 5_000,
      sharded: options.sharded ?? true,
      maxAttempts: options.maxAttempts ?? 10,
      retryBaseSeconds: options.retryBaseSeconds ?? 1,
      retryMaxSeconds: options.retryMaxSeconds ?? 300,
      produceTimeoutMs: options.produceTimeoutMs ?? 30_000,
      shutdownTimeoutMs: options.shutdownTimeoutMs ?? 30_000,
    };
    this.log = (options.log ?? silentLogger).child({ replicaId: this.replicaId });
    if (this.opts.sharded)
      this.assigner = new ShardAssigner(options.pool, { replicaId: this.replicaId });
    if (options.listen)
      this.listener = new WakeUpListener(options.listen, () => this.notify(), this.log);
  }

  /** Starts the loop; resolves once the wake-up listener is connected (or retrying). */
  async start(): Promise<void> {
    if (this.loop) return;
    await this.listener?.start();
    this.loop = this.run();
  }

  /** When a tick last completed (epoch ms), undefined before the first: for /healthz. */
  get lastTickAt(): number | undefined {
    return this.lastCompletedTickAt;
  }

  /** Cuts the current sleep short: something new is pending. */
  notify(): void {
    this.woken = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      let result: TickResult | undefined;
      try {
        result = await this.tick();
        failures = 0;
      } catch (error) {
        // A failed tick rolled back: its rows are pending again. Never fatal.
        failures += 1;
        this.options.metrics?.publishErrors.inc({ kind: 'relay' });
        this.log.error({ err: error, failures }, 'relay tick failed; backing off');
        await this.sleep(backoffMs(failures, 250, 10_000));
        continue;
      }
      if (result.claimed > 0) continue;
      if (!this.listener) {
        await this.sleep(this.opts.pollIntervalMs);
        continue;
      }
      // Ask writers for a NOTIFY, then look once more: a row committed before the flag
      // was visible is found now, one committed after it sends a notification.
      try {
        await this.markSleeping(true);
        if ((await this.tick()).claimed > 0) {
          await this.markSleeping(false);
          continue;
        }
        await this.sleep(this.opts.pollIntervalMs);
        await this.markSleeping(false);
      } catch (error) {
        this.log.warn({ err: error }, 'could not switch the wake-up flag; polling');
        await this.sleep(this.opts.pollIntervalMs);
      }
    }
  }

  /** See migration 000003: writers notify only while some relay is asleep. */
  private async markSleeping(sleeping: boolean): Promise<void> {
    await this.options.pool.query(
      `INSERT INTO outbox_relay_members (replica_id, sharded, sleeping) VALUES ($1, $2, $3)
       ON CONFLICT (replica_id) DO UPDATE SET sleeping = EXCLUDED.sleeping, sharded = EXCLUDED.sharded,
         heartbeat_at = now()`,
      [this.replicaId, this.opts.sharded, sleeping],
    );
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || this.stopping) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        this.woken = false;
        done();
      };
    });
  }

  /** One claim → produce → mark → commit. Exposed for tests and for draining by hand. */
  async tick(): Promise<TickResult> {
    const end = this.options.metrics?.tickDuration.startTimer();
    try {
      const shards = this.assigner ? await this.assigner.shards() : undefined;
      const result = await withTransaction(this.options.pool, (client) =>
        this.relayBatch(client, shards),
      );
      this.lastCompletedTickAt = Date.now();
      return result;
    } finally {
      end?.();
    }
  }

  private async relayBatch(
    client: PoolClient,
    wantedShards: number[] | undefined,
  ): Promise<TickResult> {
    let query = claimBatch(this.opts.batchSize);
    if (wantedShards) {
      const locked = await client.query<{ shard: number }>(lockShards(wantedShards));
      if (locked.rows.length === 0) return { claimed: 0, sent: 0, failed: 0, heldBack: 0 };
      query = claimShardBatch(
        locked.rows.map((r) => r.shard),
        this.opts.batchSize,
      );
    }
    const { rows } = await client.query<OutboxRow>(query);
    if (rows.length === 0) return { claimed: 0, sent: 0, failed: 0, heldBack: 0 };

    // Route each row; a row that fails holds back the later rows of its aggregate.
    const blocked = new Set<string>();
    const failures: { row: OutboxRow; error: string }[] = [];
    const routed: RoutedRow[] = [];
    for (const row of rows) {
      const key = aggregateKey(row);
      if (blocked.has(key)) continue;
      const topic = resolveTopic(this.options.topics, row.aggregate_type);
      if (topic === undefined) {
        failures.push({ row, error: new UnknownAggregateTypeError(row.aggregate_type).message });
        blocked.add(key);
      } else {
        routed.push({ row, topic });
      }
    }

    const sent = await this.produce(routed, blocked, failures);
    const heldBack = rows.length - sent.length - failures.length;

    if (sent.length > 0) {
      await this.options.hooks?.afterPublish?.(sent.map((s) => s.row));
      await client.query(
        markSent(
          sent.map((s) => s.row.id),
          sent.map((s) => s.topic),
        ),
      );
    }
    if (failures.length > 0) {
      await client.query(
        markFailed(
          failures.map((f) => f.row.id),
          failures.map((f) => f.error),
          {
            baseSeconds: this.opts.retryBaseSeconds,
            maxSeconds: this.opts.retryMaxSeconds,
            maxAttempts: this.opts.maxAttempts,
          },
        ),
      );
      for (const f of failures) {
        this.log.warn(
          {
            outboxId: f.row.id,
            aggregateId: f.row.aggregate_id,
            attempts: f.row.attempts + 1,
            error: f.error,
          },
          f.row.attempts + 1 >= this.opts.maxAttempts
            ? 'outbox event dead-lettered'
            : 'outbox event failed; will retry',
        );
      }
      this.options.metrics?.publishErrors.inc({ kind: 'row' }, failures.length);
    }
    for (const s of sent) this.options.metrics?.published.inc({ topic: s.topic });
    return { claimed: rows.length, sent: sent.length, failed: failures.length, heldBack };
  }

  /**
   * Produces the batch in one request. When Kafka refuses it for a reason that lies
   * in a message (too large, bad topic), the batch is produced row by row to find the
   * culprits; errors of Kafka itself (unreachable, timeouts) fail the whole tick.
   */
  private async produce(
    routed: RoutedRow[],
    blocked: Set<string>,
    failures: { row: OutboxRow; error: string }[],
  ): Promise<RoutedRow[]> {
    if (routed.length === 0) return [];
    try {
      await this.send(routed);
      return routed;
    } catch (error) {
      if (!isRowError(error)) throw error;
      this.log.warn(
        { err: error, rows: routed.length },
        'Kafka refused the batch; isolating the rows at fault',
      );
      // kafkajs sends one request per broker for every partition of the batch and, when
      // the broker refuses one partition, rolls back the sequence numbers of all of them,
      // also of those the broker wrote: the next produce there would be out of order.
      // A single row is a single partition: nothing was written, nothing to renew.
      if (routed.length > 1) await this.renewProducer('Kafka refused part of a batch');
    }
    const sent: RoutedRow[] = [];
    for (const r of routed) {
      const key = aggregateKey(r.row);
      if (blocked.has(key)) continue;
      try {
        await this.send([r]);
        sent.push(r);
      } catch (error) {
        if (!isRowError(error)) throw error;
        failures.push({ row: r.row, error: describeError(error) });
        blocked.add(key);
      }
    }
    return sent;
  }

  private async send(rows: RoutedRow[]): Promise<void> {
    try {
      await produceRows(this.producer, rows, this.opts.produceTimeoutMs);
    } catch (error) {
      if (isProducerStateError(error)) await this.renewProducer(describeError(error));
      throw error;
    }
  }

  private async renewProducer(reason: string): Promise<void> {
    if (!this.options.renewProducer) return;
    this.log.warn({ reason }, 'replacing the Kafka producer: its sequence numbers are stale');
    this.producer = await this.options.renewProducer(this.producer);
  }

  /**
   * Graceful stop: take no new batch, let the one in flight finish (or, after the
   * timeout, abandon it: its transaction rolls back when the pool closes and the rows
   * go back to pending), leave the shard membership. Safe to call twice.
   */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping = true;
      this.wake?.();
      if (this.loop) {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            this.log.warn('relay stop timed out waiting for the batch in flight');
            resolve();
          }, this.opts.shutdownTimeoutMs);
        });
        await Promise.race([this.loop, timeout]);
        clearTimeout(timer);
      }
      await this.listener?.stop();
      await this.assigner
        ?.leave()
        .catch((error: unknown) => this.log.warn({ err: error }, 'could not leave membership'));
    })();
    return this.stopped;
  }
}

function aggregateKey(row: OutboxRow): string {
  return `${row.aggregate_type}\u0000${row.aggregate_id}`;
}
