import type { AnomalyKind, StatsMessage } from '@outbox/dashboard-api/contract';
import type { RowId } from '../teaching/scenarios.ts';

/** The scenario row to highlight, and why. */
export interface Highlight {
  row: RowId;
  /** failure: something broke or was caught; live: the happy path is what happens now. */
  tone: 'failure' | 'live';
  at: string | null;
  detail: string;
}

const ANOMALY_ROW: Record<AnomalyKind, RowId | null> = {
  order_without_event: 'network_after_commit',
  phantom_event: 'network_after_publish',
  duplicate_caught: 'duplicate',
  double_processed: 'double_processed',
  fifo_violation: 'reordering',
  consumer_dead_letter: null,
  outbox_dead_letter: null,
};

/**
 * The row that just happened: an open Kafka outage first (it is happening now), else the
 * most recent of the last failure scenario and the last anomaly, else the happy path
 * when orders flow.
 */
export function highlightedRow(
  stats: StatsMessage | undefined,
  outageActive: boolean,
): Highlight | null {
  if (outageActive)
    return {
      row: 'outage',
      tone: 'failure',
      at: null,
      detail: 'Kafka is unreachable for the workers now',
    };
  if (!stats) return null;
  const candidates: Highlight[] = [];
  const failure = stats.scenarios.latestFailure;
  if (failure)
    candidates.push({
      row: failure.id,
      tone: 'failure',
      at: failure.at,
      detail: failure.orderId ? `order ${failure.orderId}` : '',
    });
  const anomaly = stats.latestAnomaly;
  const anomalyRow = anomaly ? ANOMALY_ROW[anomaly.kind] : null;
  if (anomaly && anomalyRow)
    candidates.push({ row: anomalyRow, tone: 'failure', at: anomaly.at, detail: anomaly.detail });
  const latest = candidates.sort((a, b) => Date.parse(b.at ?? '') - Date.parse(a.at ?? ''))[0];
  if (latest) return latest;
  const hit = stats.scenarios.latest;
  if (hit?.id === 'happy_path')
    return { row: 'happy_path', tone: 'live', at: hit.at, detail: 'orders and events agree' };
  return null;
}
