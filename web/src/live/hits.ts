import type { AnomalyKind, StatsMessage } from '@outbox/dashboard-api/contract';
import type { RowId } from '@outbox/dashboard-api/teaching';

/** When each scenario row last happened, as this page saw it. */
export type RowHits = Partial<Record<RowId, { at: string; detail: string }>>;

/**
 * The counter that shows a row's anomaly. A verdict can be undone: an order judged
 * without its event whose event was only late (a killed worker, a redelivery) gets it
 * later and leaves the count; its row should not stay lit for what did not happen.
 */
export const ROW_COUNTER = {
  network_after_publish: 'phantomEvents',
  duplicate: 'duplicatesCaught',
  double_processed: 'doubleProcessed',
  reordering: 'fifoViolations',
} as const satisfies Partial<Record<RowId, keyof StatsMessage['invariants']>>;

type CountedRow = keyof typeof ROW_COUNTER | 'network_after_commit';

/**
 * How many times a row's anomaly shows now. "Network dies after commit" is a naive-mode
 * scenario: it counts the naive orders never published (the server's scenario count),
 * not every order without events. In outbox mode those are a consumer that is behind
 * or stalled, or a defect: naming the seed's naive scenario for them would mislead.
 */
export function rowCount(row: CountedRow, m: StatsMessage): number {
  if (row === 'network_after_commit') return m.scenarios.counts.network_after_commit;
  return m.invariants[ROW_COUNTER[row]];
}

const COUNTED_ROWS: readonly CountedRow[] = [
  'network_after_commit',
  ...(Object.keys(ROW_COUNTER) as (keyof typeof ROW_COUNTER)[]),
];

export const ANOMALY_ROW: Record<AnomalyKind, CountedRow | null> = {
  order_without_event: 'network_after_commit',
  phantom_event: 'network_after_publish',
  duplicate_caught: 'duplicate',
  double_processed: 'double_processed',
  fifo_violation: 'reordering',
  consumer_dead_letter: null,
  outbox_dead_letter: null,
};

function anomalyRowOf(anomaly: NonNullable<StatsMessage['latestAnomaly']>): CountedRow | null {
  const row = ANOMALY_ROW[anomaly.kind];
  return row === 'network_after_commit' && anomaly.scenario !== 'network_after_commit' ? null : row;
}

const later = (a: string, b: string | undefined) =>
  b === undefined || Date.parse(a) > Date.parse(b);

/**
 * Follows the rows from each stats message. The server keeps only the latest anomaly
 * of any kind, so a duplicate caught a moment before a late event was judged lost would
 * be forgotten; the page therefore also notes every rise of a counter. A counter back
 * at 0 (a reset, or a verdict undone) clears its row.
 */
export function trackHits(
  hits: RowHits,
  prev: StatsMessage | undefined,
  next: StatsMessage,
): RowHits {
  const out: RowHits = { ...hits };
  const anomaly = next.latestAnomaly;
  // An order without events is the naive scenario only when the server says so.
  const anomalyRow = anomaly ? anomalyRowOf(anomaly) : null;
  const failure = next.scenarios.latestFailure;
  for (const row of COUNTED_ROWS) {
    const now = rowCount(row, next);
    if (now === 0) {
      delete out[row];
      continue;
    }
    const detail = anomaly && anomalyRow === row ? anomaly.detail : '';
    const before = prev ? rowCount(row, prev) : undefined;
    if (before !== undefined && now > before) out[row] = { at: next.at, detail };
    if (anomaly && anomalyRow === row && later(anomaly.at, out[row]?.at))
      out[row] = { at: anomaly.at, detail: anomaly.detail };
    if (failure?.id === row && later(failure.at, out[row]?.at))
      out[row] = { at: failure.at, detail: failure.orderId ? `order ${failure.orderId}` : '' };
  }
  trackBrokerRows(out, prev, next);
  return out;
}

const LEADER_MOVE_NEWS_MS = 5 * 60_000;

const lostCount = (m: StatsMessage) =>
  m.invariants.neverPublished ?? m.invariants.ordersWithoutEvents;

/**
 * The broker's rows (3 brokers only). A partition of orders.events changed leader:
 * "the partition leader killed". Orders never published rose while the relay runs with
 * acks = 1 in outbox mode: events the outbox marked sent and the cluster lost. Nothing
 * lost any more (a reset) clears the second; the first goes out after 5 minutes.
 */
function trackBrokerRows(out: RowHits, prev: StatsMessage | undefined, next: StatsMessage): void {
  const kafka = next.kafka;
  if (lostCount(next) === 0) delete out.acks_one_lost;
  // A leader's move is news for a few minutes; no counter says when it is over.
  const failover = out.leader_failover;
  if (failover && Date.parse(next.at) - Date.parse(failover.at) > LEADER_MOVE_NEWS_MS)
    delete out.leader_failover;
  if (!prev || kafka?.brokers !== 3) return;
  const before = prev.kafka;
  if (before && kafka.reachable && before.topic === kafka.topic) {
    const leaders = new Map(before.partitions.map((p) => [p.partition, p.leader]));
    const moved = kafka.partitions.find(
      (p) => leaders.has(p.partition) && leaders.get(p.partition) !== p.leader && p.leader !== null,
    );
    if (moved) {
      const from = leaders.get(moved.partition);
      out.leader_failover = {
        at: next.at,
        detail: `${kafka.topic}[${moved.partition}]: leader ${from === null || from === undefined ? 'none' : `broker ${from}`} → broker ${moved.leader}`,
      };
    }
  }
  const lost = lostCount(next);
  if (
    next.settings.mode === 'outbox' &&
    (next.settings.acks ?? 'all') === '1' &&
    lost > lostCount(prev)
  )
    out.acks_one_lost = {
      at: next.at,
      detail: `${lost} committed order${lost === 1 ? '' : 's'} whose event the outbox marked sent never reached the topic`,
    };
}
