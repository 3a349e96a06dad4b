import type { TableKind } from '../env/tables.ts';
import type { PublisherSpec } from '../publishers/child.ts';

/** The publishers of the drain scenario, side by side. */
export interface DrainVariant {
  key: string;
  label: string;
  table: TableKind;
  /** A relay process of ours, or Kafka Connect with Debezium's outbox connector. */
  kind: PublisherSpec['kind'] | 'cdc';
  replicas: number;
  sharded?: boolean;
  /** Too slow to drain the backlog in the run's budget: stopped at the cap. */
  slow?: boolean;
  /** Relay batch size, when not core's default (analysis variants). */
  batchSize?: number;
  /** Lanes of the pipelined relay, when not core's default (1: serial). */
  lanes?: number;
  /** Only run when picked with --variant (analysis, not part of the table). */
  extra?: boolean;
}

export const DRAIN_VARIANTS: DrainVariant[] = [
  {
    key: 'seed-row',
    label: 'seed row-by-row (batch 100, produce+flush+UPDATE per row)',
    table: 'seed',
    kind: 'seed-row',
    replicas: 1,
    slow: true,
  },
  {
    key: 'seed-batch',
    label: 'seed batch (batch 100, one UPDATE, 200 ms tick)',
    table: 'seed',
    kind: 'seed-batch',
    replicas: 1,
    slow: true,
  },
  {
    key: 'peer',
    label: 'peer: pg-transactional-outbox (polling, batch 5, 250 ms)',
    table: 'peer',
    kind: 'peer',
    replicas: 1,
    slow: true,
  },
  {
    key: 'ours-1-sharded',
    label: 'ours, 1 replica, sharded',
    table: 'ours',
    kind: 'ours',
    replicas: 1,
    sharded: true,
  },
  // The pipelined relay beside the serial one above, in the same run (issue 13).
  {
    key: 'ours-1-sharded-pipelined',
    label: 'ours, 1 replica, sharded, pipelined (2 lanes)',
    table: 'ours',
    kind: 'ours',
    replicas: 1,
    sharded: true,
    lanes: 2,
  },
  {
    key: 'ours-1-unsharded',
    label: 'ours, 1 replica, unsharded',
    table: 'ours',
    kind: 'ours',
    replicas: 1,
    sharded: false,
  },
  {
    key: 'ours-2-sharded',
    label: 'ours, 2 replicas, sharded',
    table: 'ours',
    kind: 'ours',
    replicas: 2,
    sharded: true,
  },
  {
    key: 'ours-2-unsharded',
    label: 'ours, 2 replicas, unsharded',
    table: 'ours',
    kind: 'ours',
    replicas: 2,
    sharded: false,
  },
  // The seed's alternative after Connect was down: the backlog is in the WAL its slot
  // kept; the clock runs from the restart (JVM start included) to the last message.
  {
    key: 'cdc',
    label: 'Debezium CDC, restarted after being down (start-up included)',
    table: 'ours',
    kind: 'cdc',
    replicas: 1,
  },
  {
    key: 'ours-1-sharded-b2000',
    label: 'ours, 1 replica, sharded, batch 2000',
    table: 'ours',
    kind: 'ours',
    replicas: 1,
    sharded: true,
    batchSize: 2000,
    extra: true,
  },
];
// A safety stop for the variants that are expected to drain the backlog.
export const DRAIN_TIMEOUT_SECONDS = 120;
