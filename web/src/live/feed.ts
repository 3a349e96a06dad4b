import type { FeedEvent } from '@outbox/dashboard-api/contract';

/** How many lines the feed keeps. */
export const FEED_LIMIT = 200;

export const feedKey = (e: FeedEvent): string => `${e.kind}:${e.id}`;

/**
 * Merges new feed lines (oldest first, as the server sends them) into the feed, newest
 * first, without repeating a line the first GET /api/events already brought.
 */
export function mergeFeed(
  feed: readonly FeedEvent[],
  incoming: readonly FeedEvent[],
  limit = FEED_LIMIT,
): readonly FeedEvent[] {
  if (incoming.length === 0) return feed;
  const seen = new Set(feed.map(feedKey));
  const fresh: FeedEvent[] = [];
  for (const e of incoming) {
    const key = feedKey(e);
    if (seen.has(key)) continue;
    seen.add(key);
    fresh.push(e);
  }
  if (fresh.length === 0) return feed;
  return [...fresh.reverse(), ...feed].slice(0, limit);
}

/** How the feed marks a line: the inbox's catch is the point of the lesson. */
export type FeedTone = 'processed' | 'caught' | 'reprocessed' | 'fifo' | 'dead';

export function feedTone(e: FeedEvent): FeedTone {
  if (e.kind === 'dead_letter') return 'dead';
  if (e.outcome === 'reprocessed') return 'reprocessed';
  if (e.caughtByInbox || e.outcome === 'duplicate') return 'caught';
  if (e.fifoViolation) return 'fifo';
  return 'processed';
}

/** Anything but a plain first delivery: what the "only anomalies" view keeps. */
export const isAnomaly = (e: FeedEvent): boolean => feedTone(e) !== 'processed';
