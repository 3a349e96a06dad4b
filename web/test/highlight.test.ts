import { describe, expect, it } from 'vitest';
import { highlightedRow } from '../src/live/highlight.ts';
import { statsMessage } from './stats-fixture.ts';

describe('highlightedRow', () => {
  it('shows the happy path while nothing went wrong', () => {
    const stats = statsMessage({
      scenarios: {
        latest: { id: 'happy_path', at: '2026-12-02T10:00:01Z', orderId: 'o1' },
        latestFailure: null,
      },
    });
    expect(highlightedRow(stats, false)).toMatchObject({ row: 'happy_path', tone: 'live' });
    expect(highlightedRow(undefined, false)).toBeNull();
  });

  it('takes the more recent of the last failure scenario and the last anomaly', () => {
    const stats = statsMessage({
      scenarios: {
        latest: { id: 'happy_path', at: '2026-12-02T10:00:09Z', orderId: null },
        latestFailure: { id: 'network_after_commit', at: '2026-12-02T10:00:02Z', orderId: 'o7' },
      },
      latestAnomaly: {
        kind: 'duplicate_caught',
        scenario: null,
        at: '2026-12-02T10:00:05Z',
        aggregateId: 'o8',
        detail: 'event 12 delivered again, skipped by the inbox',
      },
    });
    expect(highlightedRow(stats, false)).toMatchObject({ row: 'duplicate', tone: 'failure' });
    const older = statsMessage({
      ...stats,
      latestAnomaly: { ...stats.latestAnomaly!, at: '2026-12-02T10:00:01Z' },
    });
    expect(highlightedRow(older, false)).toMatchObject({
      row: 'network_after_commit',
      detail: 'order o7',
    });
  });

  it('maps the inbox and FIFO anomalies to their rows and ignores dead letters', () => {
    const anomaly = (kind: 'double_processed' | 'fifo_violation' | 'consumer_dead_letter') =>
      statsMessage({
        latestAnomaly: {
          kind,
          scenario: null,
          at: '2026-12-02T10:00:05Z',
          aggregateId: null,
          detail: '',
        },
      });
    expect(highlightedRow(anomaly('double_processed'), false)?.row).toBe('double_processed');
    expect(highlightedRow(anomaly('fifo_violation'), false)?.row).toBe('reordering');
    expect(highlightedRow(anomaly('consumer_dead_letter'), false)).toBeNull();
  });

  it('puts an open Kafka outage first', () => {
    expect(highlightedRow(statsMessage(), true)).toMatchObject({ row: 'outage' });
  });
});
