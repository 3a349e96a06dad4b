import type { StatsMessage } from '@outbox/dashboard-api/contract';
import type { RowId } from '@outbox/dashboard-api/teaching';
import type { RowHits } from './hits.ts';

/** The scenario row to highlight, and why. */
export interface Highlight {
  row: RowId;
  /** failure: something broke or was caught; live: the happy path is what happens now. */
  tone: 'failure' | 'live';
  at: string | null;
  detail: string;
}

/**
 * The row that just happened: an open Kafka outage first (it is happening now), then a
 * stalled consumer (also now), else the most recent row hit whose counter still shows
 * it, else the happy path when orders flow.
 */
export function highlightedRow(
  stats: StatsMessage | undefined,
  hits: RowHits,
  outageActive: boolean,
): Highlight | null {
  if (outageActive)
    return {
      row: 'outage',
      tone: 'failure',
      at: null,
      detail: 'Kafka is unreachable for the workers now',
    };
  // Also happening now: events wait on the topic (an order without events in outbox
  // mode is this, not the naive "network dies after commit").
  const group = stats?.consumerGroup;
  if (group?.state === 'stalled')
    return {
      row: 'consumer_stalled',
      tone: 'failure',
      at: null,
      detail: `${group.groupId}: lag ${group.lag}, offsets still for ${group.stallAfterSeconds} s or more`,
    };
  let latest: Highlight | null = null;
  for (const [row, hit] of Object.entries(hits) as [RowId, { at: string; detail: string }][]) {
    if (!latest || Date.parse(hit.at) > Date.parse(latest.at ?? ''))
      latest = { row, tone: 'failure', at: hit.at, detail: hit.detail };
  }
  if (latest) return latest;
  const hit = stats?.scenarios.latest;
  if (hit?.id === 'happy_path')
    return { row: 'happy_path', tone: 'live', at: hit.at, detail: 'orders and events agree' };
  return null;
}
