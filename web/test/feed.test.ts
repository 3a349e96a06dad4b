import type { FeedEvent } from '@outbox/dashboard-api/contract';
import { describe, expect, it } from 'vitest';
import { feedTone, isAnomaly, mergeFeed } from '../src/live/feed.ts';

const delivery = (id: number, over: Partial<Extract<FeedEvent, { kind: 'delivery' }>> = {}) =>
  ({
    kind: 'delivery',
    id: String(id),
    at: '2026-12-02T10:00:00.000Z',
    consumer: 'inventory',
    eventId: `e${id}`,
    eventType: 'OrderCreated',
    aggregateId: 'a',
    seq: 1,
    topic: 'orders.events',
    partition: 0,
    offset: String(id),
    outcome: 'processed',
    caughtByInbox: false,
    fifoViolation: false,
    ...over,
  }) satisfies FeedEvent;

describe('mergeFeed', () => {
  it('puts the newest line first and skips lines it already has', () => {
    let feed = mergeFeed([], [delivery(1), delivery(2)]);
    feed = mergeFeed(feed, [delivery(2), delivery(3)]);
    expect(feed.map((e) => e.id)).toEqual(['3', '2', '1']);
  });

  it('keeps a dead letter and a delivery with the same id apart', () => {
    const dead: FeedEvent = {
      kind: 'dead_letter',
      id: '1',
      at: '2026-12-02T10:00:00.000Z',
      consumer: 'inventory',
      topic: 'orders.events',
      partition: 0,
      offset: '9',
      reason: 'bad payload',
    };
    expect(mergeFeed([delivery(1)], [dead])).toHaveLength(2);
  });

  it('keeps at most the limit', () => {
    const feed = mergeFeed(
      [],
      [1, 2, 3, 4, 5].map((i) => delivery(i)),
      3,
    );
    expect(feed.map((e) => e.id)).toEqual(['5', '4', '3']);
  });
});

describe('feedTone', () => {
  it('marks what the inbox caught, and what it would have caught', () => {
    expect(feedTone(delivery(1))).toBe('processed');
    expect(feedTone(delivery(1, { outcome: 'duplicate', caughtByInbox: true }))).toBe('caught');
    expect(feedTone(delivery(1, { outcome: 'reprocessed' }))).toBe('reprocessed');
    expect(feedTone(delivery(1, { fifoViolation: true }))).toBe('fifo');
  });
});

describe('isAnomaly', () => {
  it('keeps everything but a plain first delivery', () => {
    expect(isAnomaly(delivery(1))).toBe(false);
    expect(isAnomaly(delivery(2, { outcome: 'duplicate', caughtByInbox: true }))).toBe(true);
    expect(isAnomaly(delivery(3, { outcome: 'reprocessed' }))).toBe(true);
  });
});
