import { OutboxRelay, type Logger, type RelayOptions } from '@outbox/core';
import type { Pool } from 'pg';

export interface RelaySwitchOptions {
  /** Everything the relay needs except `sharded`, which the switch decides. */
  relay: Omit<RelayOptions, 'sharded'> & { pool: Pool; replicaId: string };
  /** Asked every `checkMs`: should the relay run sharded now? */
  wantSharded: () => boolean;
  checkMs?: number;
  log: Logger;
}

/**
 * Runs one OutboxRelay and swaps it for one with the other `sharded` value when the
 * `worker.unsharded` failure point flips, without a restart: the old relay stops
 * gracefully (its batch in flight finishes and commits) before the new one claims.
 */
export class RelaySwitch {
  private relay: OutboxRelay | undefined;
  private sharded = true;
  private timer: NodeJS.Timeout | undefined;
  private switching: Promise<void> = Promise.resolve();
  private stopped = false;
  private relayStartedAt = Date.now();

  constructor(private readonly options: RelaySwitchOptions) {}

  /** Whether the running relay divides the shards (for /healthz and the metric). */
  get isSharded(): boolean {
    return this.sharded;
  }

  /**
   * When the running relay last completed a tick; while it has not yet (or during a
   * swap), when it was started. /healthz compares this with RELAY_STALL_MS.
   */
  get lastTickAt(): number {
    return this.relay?.lastTickAt ?? this.relayStartedAt;
  }

  async start(): Promise<void> {
    await this.startRelay(this.options.wantSharded());
    this.timer = setInterval(() => {
      const wanted = this.options.wantSharded();
      if (wanted === this.sharded || this.stopped) return;
      // Chained so that two flips in quick succession apply in order.
      this.switching = this.switching
        .then(() => this.swap(wanted))
        .catch((error: unknown) =>
          this.options.log.error({ err: error }, 'could not switch the relay mode'),
        );
    }, this.options.checkMs ?? 200);
    this.timer.unref();
  }

  private async swap(sharded: boolean): Promise<void> {
    if (this.stopped || sharded === this.sharded) return;
    this.options.log.warn(
      { replicaId: this.options.relay.replicaId, sharded },
      sharded
        ? 'worker.unsharded is off: relaying sharded again (FIFO per aggregate restored)'
        : 'worker.unsharded is on: relaying without shards (FIFO per aggregate no longer guaranteed)',
    );
    await this.stopRelay();
    if (!this.stopped) await this.startRelay(sharded);
  }

  private async startRelay(sharded: boolean): Promise<void> {
    this.sharded = sharded;
    this.relayStartedAt = Date.now();
    this.relay = new OutboxRelay({ ...this.options.relay, sharded });
    await this.relay.start();
  }

  private async stopRelay(): Promise<void> {
    const relay = this.relay;
    this.relay = undefined;
    if (!relay) return;
    await relay.stop();
  }

  /** Graceful: no more switching, the batch in flight finishes, membership left. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.switching;
    await this.stopRelay();
  }
}
