import type { FailurePointInfo, FailurePointName } from '../contract.ts';
import type { RowId } from './scenario-table.ts';

/** How a button arms its point (the request body of POST /api/failure-points/:name). */
export const OUTAGE_SECONDS = 10;

/** Seconds the "Connect down" button keeps Kafka Connect stopped. */
export const CONNECT_DOWN_SECONDS = 60;

/** Seconds "Kill the partition leader" waits before it starts the broker again. */
export const BROKER_RESTART_SECONDS = 10;

/** Seconds "Stop a follower" keeps the follower stopped (SIGSTOP). */
export const FOLLOWER_STOP_SECONDS = 20;

/**
 * Per failure point: the shell equivalent, the table row it reproduces and, for a
 * window, how long a click keeps it open (default OUTAGE_SECONDS).
 */
export const FAILURE_EXTRAS: Record<
  FailurePointName,
  { cli: string; row: RowId; seconds?: number }
> = {
  'naive.network_drop_after_commit': {
    cli: 'npm run chaos -- arm naive.network_drop_after_commit once',
    row: 'network_after_commit',
  },
  'naive.crash_before_commit': {
    cli: 'npm run chaos -- arm naive.crash_before_commit once',
    row: 'network_after_publish',
  },
  'worker.kill_mid_publish': {
    cli: 'npm run chaos -- arm worker.kill_mid_publish once',
    row: 'duplicate',
  },
  'worker.kafka_outage': {
    cli: `npm run chaos -- arm worker.kafka_outage on --seconds ${OUTAGE_SECONDS}`,
    row: 'outage',
  },
  'consumer.crash_before_offset_commit': {
    cli: 'npm run chaos -- arm consumer.crash_before_offset_commit once',
    row: 'duplicate',
  },
  'consumer.inbox_off': {
    cli: 'npm run chaos -- arm consumer.inbox_off on',
    row: 'double_processed',
  },
  'worker.unsharded': { cli: 'npm run chaos -- arm worker.unsharded on', row: 'reordering' },
  'connect.kill_mid_stream': {
    cli: 'npm run chaos -- arm connect.kill_mid_stream once',
    row: 'duplicate',
  },
  'connect.down': {
    cli: `npm run chaos -- arm connect.down on --seconds ${CONNECT_DOWN_SECONDS}`,
    row: 'outage',
    seconds: CONNECT_DOWN_SECONDS,
  },
  'broker.kill_leader': {
    cli: 'npm run chaos -- arm broker.kill_leader once',
    row: 'leader_failover',
  },
  'broker.stop_follower': {
    cli: `npm run chaos -- arm broker.stop_follower on --seconds ${FOLLOWER_STOP_SECONDS}`,
    row: 'leader_failover',
    seconds: FOLLOWER_STOP_SECONDS,
  },
  'broker.kill_leader_unreplicated': {
    cli: 'npm run chaos -- acks 1 && npm run chaos -- arm broker.kill_leader_unreplicated once',
    row: 'acks_one_lost',
  },
};

/** The arm request a click sends: a shot fires once, a window opens, a switch flips. */
export function armRequestFor(info: Pick<FailurePointInfo, 'kind' | 'name'>, active: boolean) {
  if (info.kind === 'shot') return { mode: 'once' as const };
  if (active) return { mode: 'off' as const };
  return info.kind === 'window'
    ? { mode: 'on' as const, seconds: FAILURE_EXTRAS[info.name].seconds ?? OUTAGE_SECONDS }
    : { mode: 'on' as const };
}
