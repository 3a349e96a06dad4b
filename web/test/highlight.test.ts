import { describe, expect, it } from 'vitest';
import { highlightedRow } from '../src/live/highlight.ts';
import { trackHits } from '../src/live/hits.ts';
import { POLLING, statsMessage } from './stats-fixture.ts';

const at = (s: number) => new Date(Date.UTC(2026, 11, 2, 10, 0, s)).toISOString();
const invariants = statsMessage().invariants;

describe('trackHits + highlightedRow', () => {
  it('shows the happy path while nothing went wrong', () => {
    const stats = statsMessage({
      scenarios: { latest: { id: 'happy_path', at: at(1), orderId: 'o1' }, latestFailure: null },
    });
    expect(highlightedRow(stats, trackHits({}, undefined, stats), false)).toMatchObject({
      row: 'happy_path',
      tone: 'live',
    });
    expect(highlightedRow(undefined, {}, false)).toBeNull();
  });

  it('lights the row whose counter rose last', () => {
    const m1 = statsMessage({ at: at(1) });
    const m2 = statsMessage({ at: at(2), invariants: { ...invariants, duplicatesCaught: 2 } });
    const m3 = statsMessage({
      at: at(3),
      invariants: { ...invariants, duplicatesCaught: 2, doubleProcessed: 1 },
    });
    let hits = trackHits({}, undefined, m1);
    hits = trackHits(hits, m1, m2);
    expect(highlightedRow(m2, hits, false)).toMatchObject({ row: 'duplicate', at: at(2) });
    hits = trackHits(hits, m2, m3);
    expect(highlightedRow(m3, hits, false)).toMatchObject({ row: 'double_processed' });
  });

  it('keeps a caught duplicate lit when a later anomaly is undone (an event only late)', () => {
    const m1 = statsMessage({ at: at(1) });
    const m2 = statsMessage({ at: at(2), invariants: { ...invariants, duplicatesCaught: 1 } });
    // The server's one "latest anomaly" is now a lost order that a moment later got its event.
    const m3 = statsMessage({
      at: at(3),
      invariants: { ...invariants, duplicatesCaught: 1, ordersWithoutEvents: 1 },
      scenarios: { counts: { network_after_commit: 1 } },
      latestAnomaly: {
        kind: 'order_without_event',
        scenario: 'network_after_commit',
        at: at(3),
        aggregateId: 'o7',
        detail: 'order o7 has no event',
      },
    });
    const m4 = statsMessage({
      ...m3,
      at: at(4),
      invariants: { ...invariants, duplicatesCaught: 1, ordersWithoutEvents: 0 },
      scenarios: { counts: { network_after_commit: 0 } },
    });
    let hits = trackHits({}, undefined, m1);
    hits = trackHits(hits, m1, m2);
    hits = trackHits(hits, m2, m3);
    expect(highlightedRow(m3, hits, false)).toMatchObject({
      row: 'network_after_commit',
      detail: 'order o7 has no event',
    });
    hits = trackHits(hits, m3, m4);
    expect(highlightedRow(m4, hits, false)).toMatchObject({ row: 'duplicate' });
  });

  it('takes what happened before the page opened from the latest anomaly and failure', () => {
    const first = statsMessage({
      at: at(9),
      invariants: { ...invariants, ordersWithoutEvents: 1, fifoViolations: 3 },
      scenarios: {
        latest: { id: 'happy_path', at: at(9), orderId: null },
        latestFailure: { id: 'network_after_commit', at: at(2), orderId: 'o7' },
        counts: { network_after_commit: 1 },
      },
      latestAnomaly: {
        kind: 'fifo_violation',
        scenario: null,
        at: at(5),
        aggregateId: 'o8',
        detail: 'OrderPaid before OrderCreated',
      },
    });
    const hits = trackHits({}, undefined, first);
    expect(Object.keys(hits).sort()).toEqual(['network_after_commit', 'reordering']);
    expect(highlightedRow(first, hits, false)).toMatchObject({ row: 'reordering' });
  });

  it('forgets a row whose counter is back at 0 (a reset)', () => {
    const m1 = statsMessage({ at: at(1), invariants: { ...invariants, doubleProcessed: 2 } });
    const m2 = statsMessage({ at: at(2) });
    const hits = trackHits(trackHits({}, undefined, m1), m1, m2);
    expect(hits).toEqual({});
  });

  it('names "Network dies after commit" for a naive order never published', () => {
    const m1 = statsMessage({
      at: at(1),
      settings: { mode: 'naive', trafficRate: 5, relay: POLLING },
    });
    const m2 = statsMessage({
      at: at(2),
      settings: { mode: 'naive', trafficRate: 5, relay: POLLING },
      invariants: { ...invariants, ordersWithoutEvents: 1, neverPublished: 1 },
      scenarios: { counts: { network_after_commit: 1 } },
      latestAnomaly: {
        kind: 'order_without_event',
        scenario: 'network_after_commit',
        at: at(2),
        aggregateId: 'o1',
        detail: 'order o1 (naive) has no event: never published',
      },
    });
    const hits = trackHits(trackHits({}, undefined, m1), m1, m2);
    expect(highlightedRow(m2, hits, false)).toMatchObject({
      row: 'network_after_commit',
      tone: 'failure',
    });
  });

  it('never names a naive scenario for outbox orders without events: waiting, or lost by a defect', () => {
    const group = {
      groupId: 'inventory',
      topic: 'orders.events',
      members: 0,
      lag: 6,
      partitions: [0, 1, 2].map((partition) => ({
        partition,
        committed: '1',
        highWatermark: '3',
        lag: 2,
      })),
      movedAt: at(0),
      stallAfterSeconds: 15,
      readAt: at(3),
      error: null,
    };
    const m1 = statsMessage({ at: at(1) });
    // Published, not consumed: the consumer is behind, then stalled.
    const m2 = statsMessage({
      at: at(2),
      invariants: { ...invariants, ordersWithoutEvents: 6, publishedNotConsumed: 6 },
      consumerGroup: { ...group, state: 'behind' },
    });
    let hits = trackHits(trackHits({}, undefined, m1), m1, m2);
    expect(highlightedRow(m2, hits, false)).toBeNull();
    const m3 = statsMessage({ ...m2, at: at(3), consumerGroup: { ...group, state: 'stalled' } });
    hits = trackHits(hits, m2, m3);
    expect(highlightedRow(m3, hits, false)).toMatchObject({ row: 'consumer_stalled' });
    // An outbox order really lost (a relay defect): red tile, but not the naive scenario,
    // even from an older server that still tags it so in the anomaly's kind.
    const m4 = statsMessage({
      at: at(4),
      invariants: { ...invariants, ordersWithoutEvents: 1, neverPublished: 1 },
      latestAnomaly: {
        kind: 'order_without_event',
        scenario: null,
        at: at(4),
        aggregateId: 'o9',
        detail: 'order o9 (outbox) has no event on the topic although marked sent',
      },
    });
    hits = trackHits(hits, m3, m4);
    expect(hits.network_after_commit).toBeUndefined();
    expect(highlightedRow(m4, hits, false)?.row).not.toBe('network_after_commit');
  });

  it('puts an open Kafka outage first', () => {
    expect(highlightedRow(statsMessage(), {}, true)).toMatchObject({ row: 'outage' });
  });
});
