import {
  CdcConfirmer,
  OutboxRelay,
  type Logger,
  type RelayAcks,
  type RelayOptions,
} from '@outbox/core';
import type { Producer } from 'kafkajs';
import type { Pool } from 'pg';

/**
 * What this replica should be doing now:
 * - `relay`: publish the outbox, sharded (FIFO per aggregate) or not (failure point 7);
 * - `confirm`: Debezium publishes (the demo's CDC relay); mark sent what its slot has
 *   confirmed, and publish nothing.
 */
export type WorkerRole =
  | { role: 'relay'; sharded: boolean; acks?: RelayAcks }
  | { role: 'confirm'; slot: string; topic: string };

export interface RelaySwitchOptions {
  /** Everything the relay needs except `sharded` and `acks`, which the switch decides. */
  relay: Omit<RelayOptions, 'sharded' | 'acks'> & { pool: Pool; replicaId: string };
  /**
   * Before a relay starts with `acks`: returns the producer it must use (kafkajs sends
   * acks = 1 only on a non-idempotent producer, so a change of acks means another
   * producer). Default: the relay options' producer.
   */
  producerFor?: (acks: RelayAcks) => Promise<Producer>;
  /** Asked every `checkMs`: what should this replica do now? */
  want: () => WorkerRole;
  checkMs?: number;
  log: Logger;
}

/** One running part: the relay or the confirmer. */
interface Runner {
  readonly lastTickAt: number | undefined;
  stop(): Promise<void>;
}

const keyOf = (r: WorkerRole) =>
  r.role === 'relay' ? `relay:${r.sharded}:${r.acks ?? 'all'}` : `confirm:${r.slot}`;

/**
 * Runs one OutboxRelay, or core's CdcConfirmer while Debezium publishes, and swaps
 * them without a restart when the wanted role changes (the `worker.unsharded` failure
 * point, the demo's relay handover, the relay's acks): the old part stops gracefully (a relay's batch in
 * flight finishes and commits) before the new one starts, so this replica never runs
 * both.
 */
export class RelaySwitch {
  private runner: Runner | undefined;
  private current: WorkerRole = { role: 'relay', sharded: true };
  private timer: NodeJS.Timeout | undefined;
  private switching: Promise<void> = Promise.resolve();
  private stopped = false;
  private runnerStartedAt = Date.now();

  constructor(private readonly options: RelaySwitchOptions) {}

  /** Whether the running relay divides the shards (for /healthz and the metric). */
  get isSharded(): boolean {
    return this.current.role === 'relay' && this.current.sharded;
  }

  /** What this replica does now. */
  get role(): WorkerRole {
    return this.current;
  }

  /**
   * When the running part last completed a round; while it has not yet (or during a
   * swap), when it was started. /healthz compares this with RELAY_STALL_MS.
   */
  get lastTickAt(): number {
    return this.runner?.lastTickAt ?? this.runnerStartedAt;
  }

  async start(): Promise<void> {
    await this.startRunner(this.options.want());
    this.timer = setInterval(() => {
      const wanted = this.options.want();
      if (keyOf(wanted) === keyOf(this.current) || this.stopped) return;
      // Chained so that two changes in quick succession apply in order.
      this.switching = this.switching
        .then(() => this.swap(wanted))
        .catch((error: unknown) =>
          this.options.log.error({ err: error }, 'could not switch the relay mode'),
        );
    }, this.options.checkMs ?? 200);
    this.timer.unref();
  }

  private async swap(wanted: WorkerRole): Promise<void> {
    if (this.stopped || keyOf(wanted) === keyOf(this.current)) return;
    this.options.log.warn(
      { replicaId: this.options.relay.replicaId, ...wanted },
      wanted.role === 'confirm'
        ? `Debezium publishes now: confirming from slot ${wanted.slot}, publishing nothing`
        : `${
            wanted.sharded
              ? 'relaying sharded (FIFO per aggregate)'
              : 'worker.unsharded is on: relaying without shards (FIFO per aggregate no longer guaranteed)'
          }${
            (wanted.acks ?? 'all') === 'all'
              ? ', acks = all'
              : ', acks = 1 (UNSAFE: a leader that dies before its followers copy a batch loses events marked sent)'
          }`,
    );
    await this.stopRunner();
    if (!this.stopped) await this.startRunner(wanted);
  }

  private async startRunner(role: WorkerRole): Promise<void> {
    this.runnerStartedAt = Date.now();
    if (role.role === 'relay') {
      const acks = role.acks ?? 'all';
      // May throw (Kafka unreachable): `current` is then still the old role, so the
      // next check tries again.
      const producer = this.options.producerFor
        ? await this.options.producerFor(acks)
        : this.options.relay.producer;
      this.current = role;
      const relay = new OutboxRelay({
        ...this.options.relay,
        producer,
        sharded: role.sharded,
        acks,
      });
      this.runner = relay;
      await relay.start();
    } else {
      this.current = role;
      const confirmer = new CdcConfirmer({
        pool: this.options.relay.pool,
        slot: role.slot,
        topic: role.topic,
        log: this.options.log,
      });
      this.runner = confirmer;
      confirmer.start();
    }
  }

  private async stopRunner(): Promise<void> {
    const runner = this.runner;
    this.runner = undefined;
    if (!runner) return;
    await runner.stop();
  }

  /** Graceful: no more switching, the batch in flight finishes, membership left. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.switching;
    await this.stopRunner();
  }
}
