import type { AnomalyKind, StatsMessage } from '@outbox/dashboard-api/contract';
import type { RowId } from '../teaching/scenarios.ts';

/** When each scenario row last happened, as this page saw it. */
export type RowHits = Partial<Record<RowId, { at: string; detail: string }>>;

/**
 * The counter that shows a row's anomaly. A verdict can be undone: an order judged
 * without its event whose event was only late (a killed worker, a redelivery) gets it
 * later and leaves the count; its row should not stay lit for what did not happen.
 */
export const ROW_COUNTER = {
  network_after_commit: 'ordersWithoutEvents',
  network_after_publish: 'phantomEvents',
  duplicate: 'duplicatesCaught',
  double_processed: 'doubleProcessed',
  reordering: 'fifoViolations',
} as const satisfies Partial<Record<RowId, keyof StatsMessage['invariants']>>;

type CountedRow = keyof typeof ROW_COUNTER;

export const ANOMALY_ROW: Record<AnomalyKind, CountedRow | null> = {
  order_without_event: 'network_after_commit',
  phantom_event: 'network_after_publish',
  duplicate_caught: 'duplicate',
  double_processed: 'double_processed',
  fifo_violation: 'reordering',
  consumer_dead_letter: null,
  outbox_dead_letter: null,
};

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
  const failure = next.scenarios.latestFailure;
  for (const [row, counter] of Object.entries(ROW_COUNTER) as [CountedRow, string][]) {
    const now = next.invariants[counter as keyof StatsMessage['invariants']];
    if (now === 0) {
      delete out[row];
      continue;
    }
    const detail = anomaly && ANOMALY_ROW[anomaly.kind] === row ? anomaly.detail : '';
    const before = prev?.invariants[counter as keyof StatsMessage['invariants']];
    if (before !== undefined && now > before) out[row] = { at: next.at, detail };
    if (anomaly && ANOMALY_ROW[anomaly.kind] === row && later(anomaly.at, out[row]?.at))
      out[row] = { at: anomaly.at, detail: anomaly.detail };
    if (failure?.id === row && later(failure.at, out[row]?.at))
      out[row] = { at: failure.at, detail: failure.orderId ? `order ${failure.orderId}` : '' };
  }
  return out;
}
