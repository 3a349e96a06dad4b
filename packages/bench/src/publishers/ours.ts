import { OutboxRelay } from '@outbox/core';
import type { Publisher, PublisherDeps } from './publisher.ts';

export interface OursOptions {
  sharded: boolean;
  /** LISTEN/NOTIFY wake-up (true) or polling only. */
  listen: boolean;
  pollIntervalMs?: number;
  replicaId?: string;
  batchSize?: number;
  /** Pipelined relay: lanes per replica (core's default 1, the serial relay). */
  lanes?: number;
}

/** Ours: core's OutboxRelay with its defaults (batch 500, 5 s fallback poll). */
export function oursPublisher(deps: PublisherDeps, options: OursOptions): Publisher {
  const relay = new OutboxRelay({
    pool: deps.pool,
    producer: deps.producer,
    topics: { order: deps.topic },
    sharded: options.sharded,
    ...(options.listen ? { listen: deps.pgConfig } : {}),
    ...(options.pollIntervalMs ? { pollIntervalMs: options.pollIntervalMs } : {}),
    ...(options.replicaId ? { replicaId: options.replicaId } : {}),
    ...(options.batchSize ? { batchSize: options.batchSize } : {}),
    ...(options.lanes ? { lanes: options.lanes } : {}),
  });
  return {
    start: () => relay.start(),
    stop: () => relay.stop(),
  };
}
