import type {
  FailurePointInfo,
  KafkaPartition,
  KafkaView,
  RelayAcks,
  StatsMessage,
} from '@outbox/dashboard-api/contract';

/** How many brokers the demo runs: 1 unless the server says 3 (an older server says nothing). */
export const brokerCount = (kafka: KafkaView | undefined): number => kafka?.brokers ?? 1;

/** The command that starts the demo on a 3-broker cluster. */
export const CLUSTER_COMMAND = 'npm run demo -- --brokers 3';

/**
 * Why a failure point cannot run now, or null when it can. A 'cluster' point needs the
 * 3-broker demo: with one broker there is no follower to stop and no leader to elect.
 */
export function clusterBlocked(
  info: Pick<FailurePointInfo, 'appliesTo'>,
  kafka: KafkaView | undefined,
): string | null {
  if (info.appliesTo !== 'cluster') return null;
  return brokerCount(kafka) === 3
    ? null
    : `Needs 3 brokers: this demo runs ${brokerCount(kafka)}. Start it with ${CLUSTER_COMMAND}.`;
}

/** One replica of a partition as the panel draws it. */
export type ReplicaState = 'leader' | 'in-sync' | 'out-of-sync' | 'down';

export interface ReplicaView {
  id: number;
  state: ReplicaState;
}

export type PartitionHealth = 'ok' | 'under-replicated' | 'below-min-isr' | 'offline';

export interface PartitionRow {
  partition: number;
  leader: number | null;
  replicas: ReplicaView[];
  isr: number[];
  /** Replicas not in the ISR (a stopped follower, one catching up after a restart). */
  outOfSync: number[];
  health: PartitionHealth;
  busiest: boolean;
  messagesPerSecond: number;
}

/**
 * Each partition of the topic with its replicas told apart: the leader, the followers in
 * sync, those out of sync, those whose broker is down. Health, worst first: no leader
 * (offline: nobody can write or read it); fewer in sync than min.insync.replicas
 * (acks = all writes are refused until a follower catches up: the relay retries);
 * under-replicated (writes go on, with less to spare).
 */
export function partitionRows(kafka: KafkaView): PartitionRow[] {
  const down = new Set(kafka.nodes.filter((n) => !n.up).map((n) => n.id));
  return [...kafka.partitions]
    .sort((a, b) => a.partition - b.partition)
    .map((p) => {
      const inSync = new Set(p.isr);
      const replicas: ReplicaView[] = p.replicas.map((id) => ({
        id,
        state:
          id === p.leader
            ? 'leader'
            : down.has(id)
              ? 'down'
              : inSync.has(id)
                ? 'in-sync'
                : 'out-of-sync',
      }));
      return {
        partition: p.partition,
        leader: p.leader,
        replicas,
        isr: p.isr,
        outOfSync: p.replicas.filter((id) => !inSync.has(id)),
        health: healthOf(p, kafka.minInsyncReplicas),
        busiest: kafka.busiestPartition === p.partition,
        messagesPerSecond: p.messagesPerSecond,
      };
    });
}

function healthOf(p: KafkaPartition, minInsync: number | null): PartitionHealth {
  if (p.leader === null) return 'offline';
  if (minInsync !== null && p.isr.length < minInsync) return 'below-min-isr';
  if (p.isr.length < p.replicas.length) return 'under-replicated';
  return 'ok';
}

export interface ClusterSummary {
  tone: 'ok' | 'warn' | 'broken' | 'unknown';
  text: string;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** One line over the table: the worst thing the cluster shows now. */
export function clusterSummary(kafka: KafkaView | undefined): ClusterSummary {
  if (!kafka) return { tone: 'unknown', text: 'Not read from Kafka yet.' };
  const rows = partitionRows(kafka);
  const count = (h: PartitionHealth) => rows.filter((r) => r.health === h).length;
  const downNodes = kafka.nodes.filter((n) => !n.up).length;
  const stale = kafka.reachable ? '' : ' (Kafka could not be read this tick: the last known state)';
  if (rows.length === 0)
    return { tone: 'unknown', text: `The topic ${kafka.topic} has no partitions yet.${stale}` };
  const offline = count('offline');
  if (offline > 0)
    return {
      tone: 'broken',
      text: `${plural(offline, 'partition is', 'partitions are')} offline: no leader, nobody can write them until one is elected.${stale}`,
    };
  const belowMin = count('below-min-isr');
  if (belowMin > 0)
    return {
      tone: 'warn',
      text: `${plural(belowMin, 'partition has', 'partitions have')} fewer in-sync replicas than min.insync.replicas = ${kafka.minInsyncReplicas ?? '?'}: acks = all writes are refused there, the relay retries them.${stale}`,
    };
  const under = count('under-replicated');
  if (under > 0 || downNodes > 0)
    return {
      tone: 'warn',
      text: `${under > 0 ? `${plural(under, 'partition is', 'partitions are')} under-replicated` : 'Every partition is fully replicated'}${downNodes > 0 ? `, ${plural(downNodes, 'broker is', 'brokers are')} down` : ''}: writes go on, with less to spare.${stale}`,
    };
  if (kafka.brokers === 1)
    return {
      tone: 'ok',
      text: `One broker: every partition has its only copy there. If it dies, nothing is readable until it is back.${stale}`,
    };
  return { tone: 'ok', text: `Every partition has all its replicas in sync.${stale}` };
}

/** A partition's leader changed, as this page saw it. */
export interface LeaderMove {
  from: number | null;
  to: number | null;
  at: string;
}

export type LeaderMoves = Partial<Record<number, LeaderMove>>;

/**
 * Follows each partition's leader from one stats message to the next: a leader killed
 * shows as a move to none (offline) and then to the follower elected. A tick that could
 * not read Kafka repeats the last known state and moves nothing.
 */
export function trackLeaderMoves(
  moves: LeaderMoves,
  prev: KafkaView | undefined,
  next: KafkaView | undefined,
  at: string,
): LeaderMoves {
  if (!prev || !next || !next.reachable || prev.topic !== next.topic) return moves;
  const before = new Map(prev.partitions.map((p) => [p.partition, p.leader]));
  let out = moves;
  for (const p of next.partitions) {
    if (!before.has(p.partition)) continue;
    const from = before.get(p.partition) ?? null;
    if (from === p.leader) continue;
    // Through "none": keep where it came from, so the panel says 2 → 3, not none → 3.
    const earlier = out[p.partition];
    const origin = from === null && earlier && earlier.to === null ? earlier.from : from;
    out = { ...out, [p.partition]: { from: origin, to: p.leader, at } };
  }
  return out;
}

export const ACKS_TEXT: Record<RelayAcks, { label: string; how: string }> = {
  all: {
    label: 'acks = all',
    how: 'The leader answers once every in-sync replica has the batch (at least min.insync.replicas of them): the relay marks rows sent only when losing one broker cannot lose them.',
  },
  '1': {
    label: 'acks = 1 (UNSAFE)',
    how: 'UNSAFE: the leader answers as soon as it has written the batch itself. If it dies before a follower copies it, a follower without the batch is elected and the batch is gone. The outbox has already marked those rows sent, so nothing ever retries them: lost, with nothing pending.',
  },
};

/** The relay's acks: 'all' unless the server says otherwise (older servers say nothing). */
export const acksOf = (settings: StatsMessage['settings'] | undefined): RelayAcks | undefined =>
  settings ? (settings.acks ?? 'all') : undefined;
