import { randomUUID } from 'node:crypto';
import type { Producer } from 'kafkajs';
import type pg from 'pg';
import type { Pool, PoolClient } from 'pg';
import type { Logger } from 'pino';
import { withTransaction } from '../db/transaction.ts';
import {
  OutboxError,
  ProducerRenewalRequiredError,
  TopicUnavailableError,
  UnknownAggregateTypeError,
} from '../errors.ts';
import { silentLogger } from '../logger.ts';
import type { OutboxMetrics } from '../metrics/metrics.ts';
import { needsRenewal, sendAcknowledged } from './acknowledged-send.ts';
import { backoffMs } from './backoff.ts';
import { isolateRefusedRows } from './isolate.ts';
import {
  describeError,
  isRowError,
  isTopicUnavailableError,
  positionOf,
  rememberPositions,
  rowsBatch,
  type RelayAcks,
  type RoutedRow,
} from './publish.ts';
import { laneCount, laneShards, SendTurn, type Lane } from './lanes.ts';
import { PublishSpans } from './publish-spans.ts';
import { ShardAssigner } from './sharding.ts';
import {
  awaitWritersInCommit,
  claimBatch,
  claimLockedShardBatch,
  markFailed,
  leaveMembership,
  markSleeping as sleepingMark,
  markSent,
  type OutboxRow,
} from './sql.ts';
import { resolveRelayTimings } from './timings.ts';
import { resolveTopic, type TopicMap } from './topics.ts';
import { WakeSignal } from './wake-signal.ts';
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
   * Replaces a producer whose sequence numbers can no longer be trusted: create and
   * connect a new one, dispose of the old one, return the new one (a new producer id;
   * kafkajs cannot reset one in place). Called right after a send whose outcome is
   * unknown (a timeout, a reset, a sequence error: the broker may have appended it; see
   * sendAcknowledged) and after Kafka refused part of a multi-row batch; if it throws,
   * it is called again before the next send, which it must precede.
   * Without it, such a relay cannot go on safely: every later tick fails with
   * ProducerRenewalRequiredError (the rows wait, nothing is lost) until the process is
   * restarted. Anything long-running must supply it.
   */
  renewProducer?: (broken: Producer) => Promise<Producer>;
  topics: TopicMap;
  /** Client config for the LISTEN connection; without it the relay only polls. */
  listen?: pg.ClientConfig;
  /** Rows per claim (default 500). */
  batchSize?: number;
  /**
   * Fallback poll when no notification arrives (default 5 s, the seed's). With
   * `failureBackoffMaxMs` and `memberTtlMs` it must satisfy the invariant in
   * relay/timings.ts; the constructor throws RelayTimingError otherwise.
   */
  pollIntervalMs?: number;
  /** Cap of the wait after a failed tick (default 4 s; the wait reaches 1.2 × this). */
  failureBackoffMaxMs?: number;
  /**
   * How long this relay's membership lasts without a heartbeat: peers and writers take
   * it for dead after that. Default: twice the longest silence (10 s by default).
   */
  memberTtlMs?: number;
  /** Divide the 64 shards among replicas (FIFO per aggregate with N replicas). Default true. */
  sharded?: boolean;
  /**
   * Pipelined relay: this replica's shards are divided among this many lanes, each a
   * serial claim → produce → mark → commit loop on its own transaction, and the lanes
   * take turns on the one producer (one send at a time): while one lane waits for
   * Kafka's ack of its batch, another claims or marks its own. An aggregate lives in one
   * shard, a shard in one lane, so a lane's failed batch never holds an aggregate of
   * another lane's, and FIFO per aggregate holds as with one lane (see lanes.ts).
   * Sharded relays only (an unsharded relay runs one lane). Default 1, today's serial
   * relay; the measured gain is in packages/bench/RESULTS.md (relay drain).
   */
  lanes?: number;
  replicaId?: string;
  /** Failures of one row before it is dead-lettered (default 10). */
  maxAttempts?: number;
  /** Row backoff: base and cap, in seconds (default 1 s doubling to 5 min). */
  retryBaseSeconds?: number;
  retryMaxSeconds?: number;
  /**
   * The producer acks (default 'all'). 1 is UNSAFE and exists for the lab's lesson
   * only: the relay marks rows sent once the partition leader alone has them, and a
   * leader that dies before its followers copy them loses events the outbox marked
   * sent; nothing retries them. It breaks the outbox's guarantee. kafkajs refuses acks
   * other than all on an idempotent producer, so with 1 the producer (and every one
   * `renewProducer` returns) must be built with `idempotent: false`.
   */
  acks?: RelayAcks;
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
      | 'failureBackoffMaxMs'
      | 'memberTtlMs'
      | 'sharded'
      | 'lanes'
      | 'maxAttempts'
      | 'retryBaseSeconds'
      | 'retryMaxSeconds'
      | 'produceTimeoutMs'
      | 'shutdownTimeoutMs'
      | 'acks'
    >
  >;
  private readonly log: Logger;
  private readonly assigner: ShardAssigner | undefined;
  private readonly listener: WakeUpListener | undefined;
  private stopping = false;
  private loop: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  private readonly lanes: Lane[];
  private idleLanes = 0;
  private readonly sendTurn = new SendTurn();
  private producer: Producer;
  private lastCompletedTickAt: number | undefined;

  constructor(private readonly options: RelayOptions) {
    this.producer = options.producer;
    this.replicaId = options.replicaId ?? `relay-${randomUUID().slice(0, 8)}`;
    this.opts = {
      // Checked here, at start-up: a bad combination is a configuration error.
      ...resolveRelayTimings({
        pollIntervalMs: options.pollIntervalMs,
        failureBackoffMaxMs: options.failureBackoffMaxMs,
        memberTtlMs: options.memberTtlMs,
      }),
      batchSize: options.batchSize ?? 500,
      sharded: options.sharded ?? true,
      lanes: (options.sharded ?? true) ? laneCount(options.lanes) : 1,
      maxAttempts: options.maxAttempts ?? 10,
      retryBaseSeconds: options.retryBaseSeconds ?? 1,
      retryMaxSeconds: options.retryMaxSeconds ?? 300,
      produceTimeoutMs: options.produceTimeoutMs ?? 30_000,
      shutdownTimeoutMs: options.shutdownTimeoutMs ?? 30_000,
      acks: options.acks ?? 'all',
    };
    if (this.opts.acks !== 'all' && options.producer.isIdempotent())
      throw new OutboxError(
        'acks = 1 needs a producer built with idempotent: false (kafkajs sends only acks = all on an idempotent one)',
      );
    this.log = (options.log ?? silentLogger).child({ replicaId: this.replicaId });
    this.lanes = Array.from({ length: this.opts.lanes }, (_, index) => ({
      index,
      wake: new WakeSignal(),
      waiting: undefined,
    }));
    if (this.opts.sharded)
      this.assigner = new ShardAssigner(options.pool, {
        replicaId: this.replicaId,
        ttlMs: this.opts.memberTtlMs,
      });
    if (options.listen)
      this.listener = new WakeUpListener(options.listen, () => this.notify(), this.log);
  }

  /** Starts the loop; resolves once the wake-up listener is connected (or retrying). */
  async start(): Promise<void> {
    if (this.loop) return;
    await this.listener?.start();
    // Heartbeats from here on are the assigner's timer's, not the ticks' (see start()).
    this.assigner?.start();
    this.loop = Promise.all(this.lanes.map((lane) => this.run(lane))).then(() => undefined);
  }

  /** When a tick last completed (epoch ms), undefined before the first: for /healthz. */
  get lastTickAt(): number | undefined {
    return this.lastCompletedTickAt;
  }

  /** Cuts the current sleep short: something new is pending. */
  notify(): void {
    for (const lane of this.lanes) lane.wake.notify();
  }

  private async run(lane: Lane): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      let result: TickResult | undefined;
      try {
        result = await this.tickLane(lane);
        failures = 0;
      } catch (error) {
        // A failed tick rolled back: its rows are pending again. Never fatal.
        failures += 1;
        this.options.metrics?.publishErrors.inc({ kind: 'relay' });
        this.log.error(
          { err: error, failures, lane: lane.index },
          'relay tick failed; backing off',
        );
        await this.idle(lane, 'backoff', () =>
          lane.wake.sleep(backoffMs(failures, 250, this.opts.failureBackoffMaxMs)),
        );
        continue;
      }
      if (result.claimed > 0) {
        // Writers do not notify while this replica is awake: a lane that found nothing
        // looks again after each batch of a busy one instead of waiting for the poll.
        for (const other of this.lanes) if (other.waiting === 'idle') other.wake.notify();
        continue;
      }
      // Only the last lane to find nothing puts the replica to sleep; the others wait
      // for a busy lane's nudge, a notification or the poll.
      await this.idle(lane, 'idle', () =>
        this.idleLanes === this.lanes.length
          ? this.sleepUntilNotified(lane)
          : lane.wake.sleep(this.opts.pollIntervalMs),
      );
    }
  }

  /** Counts the lane as not relaying (found nothing, or backing off) while `wait` runs. */
  private async idle(lane: Lane, why: Lane['waiting'], wait: () => Promise<void>): Promise<void> {
    this.idleLanes += 1;
    lane.waiting = why;
    try {
      await wait();
    } finally {
      lane.waiting = undefined;
      this.idleLanes -= 1;
    }
  }

  private async sleepUntilNotified(lane: Lane): Promise<void> {
    if (!this.listener) return lane.wake.sleep(this.opts.pollIntervalMs);
    // Ask writers for a NOTIFY, wait out those that decided without it, then look once
    // more (every shard of the replica): a row committed by now is found, one committed
    // later sends a notification.
    try {
      await this.markSleeping(true);
      await this.options.pool.query(awaitWritersInCommit());
      if ((await this.tick()).claimed === 0) await lane.wake.sleep(this.opts.pollIntervalMs);
      await this.markSleeping(false);
    } catch (error) {
      this.log.warn({ err: error }, 'could not switch the wake-up flag; polling');
      await lane.wake.sleep(this.opts.pollIntervalMs);
    }
    // Awake again: so are the lanes that waited for a busy lane (there is none now).
    for (const other of this.lanes) if (other !== lane) other.wake.notify();
  }

  /** See migrations 000003, 000006, 000007: writers notify only while some relay is asleep. */
  private async markSleeping(sleeping: boolean): Promise<void> {
    await this.options.pool.query(
      sleepingMark(this.replicaId, {
        sharded: this.opts.sharded,
        sleeping,
        ttlMs: this.opts.memberTtlMs,
      }),
    );
  }

  /** One claim → produce → mark → commit. Exposed for tests and for draining by hand. */
  tick(): Promise<TickResult> {
    return this.tickLane(undefined);
  }

  /** A tick over the lane's shards, or over all of the replica's without a lane. */
  private async tickLane(lane: Lane | undefined): Promise<TickResult> {
    const end = this.options.metrics?.tickDuration.startTimer();
    try {
      const all = this.assigner ? await this.assigner.shards() : undefined;
      const shards = all && lane ? laneShards(all, lane.index, this.lanes.length) : all;
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
    const { rows } = await client.query<OutboxRow>(
      wantedShards
        ? claimLockedShardBatch(wantedShards, this.opts.batchSize)
        : claimBatch(this.opts.batchSize),
    );
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
          sent.map((s) => positionOf(s)?.partition ?? null),
          sent.map((s) => positionOf(s)?.offset ?? null),
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
   * in a message (too large, bad record), the rows at fault are searched for in a
   * bounded number of requests (isolate.ts); rows the search does not reach go back to
   * pending. Errors of Kafka itself (unreachable, timeouts, a topic missing or not
   * writable yet) fail the whole tick and count against no row.
   */
  private async produce(
    routed: RoutedRow[],
    blocked: Set<string>,
    failures: { row: OutboxRow; error: string }[],
  ): Promise<RoutedRow[]> {
    if (routed.length === 0) return [];
    let refusal: unknown;
    try {
      await this.send(routed);
      return routed;
    } catch (error) {
      // send() has already replaced the producer if the refusal may have left some
      // partitions written (sendAcknowledged knows when).
      if (isTopicUnavailableError(error)) throw this.topicUnavailable(routed, error);
      if (!isRowError(error)) throw error;
      this.log.warn(
        { err: error, rows: routed.length },
        'Kafka refused the batch; isolating the rows at fault',
      );
      refusal = error;
    }
    try {
      const isolation = await isolateRefusedRows(routed, refusal, {
        send: (rows) => this.send(rows),
        blocked,
        aggregateKey,
      });
      failures.push(...isolation.failed);
      if (isolation.released.length > 0)
        this.log.warn(
          { rows: isolation.released.length, sends: isolation.sends },
          'isolation budget spent; the rows not reached go back to pending',
        );
      return isolation.sent;
    } catch (error) {
      if (isTopicUnavailableError(error)) throw this.topicUnavailable(routed, error);
      throw error;
    }
  }

  private topicUnavailable(routed: RoutedRow[], cause: unknown): TopicUnavailableError {
    const topics = [...new Set(routed.map((r) => r.topic))];
    this.log.warn(
      { topics, rows: routed.length, error: describeError(cause) },
      'Kafka does not know a topic of the batch or does not let the relay write it; retrying, no row counted',
    );
    return new TopicUnavailableError(topics, cause);
  }

  /** One send at a time on the producer, whichever lane asks (see SendTurn). */
  private send(rows: RoutedRow[]): Promise<void> {
    return this.sendTurn.run(() => this.sendNow(rows));
  }

  private async sendNow(rows: RoutedRow[]): Promise<void> {
    // After a send whose outcome is unknown (sendAcknowledged remembers it on the
    // producer, so a new relay on the same producer sees it too), kafkajs has wound the
    // sequence numbers back to those of a batch the broker may have appended: these
    // rows would be taken for it and dropped. A new producer (a new producer id) is
    // used instead of re-sending that same batch, which the broker would deduplicate,
    // because this tick's rows are not that batch whenever shards moved, a row lock
    // was not obtained, or another relay now uses the producer. The cost is one
    // InitProducerId per fault, and the appended batch may reach the topic twice
    // (at-least-once: consumers' inboxes catch it).
    if (needsRenewal(this.producer)) await this.renewProducer('the outcome of a send is unknown');
    const spans = new PublishSpans(rows);
    try {
      const acknowledged = await sendAcknowledged(
        this.producer,
        rowsBatch(
          rows,
          this.opts.produceTimeoutMs,
          (routed) => spans.headersOf(routed),
          this.opts.acks,
        ),
      );
      rememberPositions(rows, acknowledged);
      spans.acknowledged();
    } catch (error) {
      spans.failed(error);
      // Renewed at once if possible (the next tick starts clean); a renewal that fails
      // (Kafka still down) is asked for again before the next send, above.
      if (needsRenewal(this.producer) && this.options.renewProducer)
        await this.renewProducer(describeError(error)).catch((renewal: unknown) =>
          this.log.warn({ err: renewal }, 'could not replace the Kafka producer yet'),
        );
      throw error;
    }
  }

  private async renewProducer(reason: string): Promise<void> {
    if (!this.options.renewProducer) {
      if (!needsRenewal(this.producer)) return;
      this.log.error(
        { reason },
        'the Kafka producer must be replaced and no renewProducer was given: relaying stops',
      );
      throw new ProducerRenewalRequiredError();
    }
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
      for (const lane of this.lanes) lane.wake.close();
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
      // Sharded or not, the row goes: the others take over at once, and a row left
      // asleep would keep writers notifying until its TTL ran out.
      await (
        this.assigner
          ? this.assigner.leave()
          : this.options.pool.query(leaveMembership(this.replicaId))
      )
        .then(() => undefined)
        .catch((error: unknown) => this.log.warn({ err: error }, 'could not leave membership'));
    })();
    return this.stopped;
  }
}

function aggregateKey(row: OutboxRow): string {
  return `${row.aggregate_type}\u0000${row.aggregate_id}`;
}
