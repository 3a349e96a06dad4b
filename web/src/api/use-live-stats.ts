import {
  API_ROUTES,
  SOCKET_EVENTS,
  eventsResponseSchema,
  statsMessageSchema,
  type FeedEvent,
  type StatsMessage,
} from '@outbox/dashboard-api/contract';
import { useEffect, useReducer } from 'react';
import { io } from 'socket.io-client';
import { isAnomaly, mergeFeed } from '../live/feed.ts';
import { trackHits, type RowHits } from '../live/hits.ts';
import { trackLeaderMoves, type LeaderMoves } from '../live/kafka.ts';
import { appendSample, type Sample } from '../live/series.ts';
import { api } from './client.ts';

/** Everything the socket brings: the latest message, the chart series, the feed. */
export interface LiveState {
  stats: StatsMessage | undefined;
  series: readonly Sample[];
  feed: readonly FeedEvent[];
  /**
   * Duplicates, reprocessed and out-of-order deliveries and dead letters, kept apart:
   * under traffic the plain feed scrolls a rare line away within seconds.
   */
  anomalies: readonly FeedEvent[];
  /** When each scenario row last happened (for the table's highlight). */
  hits: RowHits;
  /** orders.events' leader changes this page saw, per partition (the Kafka panel). */
  leaderMoves: LeaderMoves;
  connected: boolean;
  /** A message that does not match the contract (shown, not thrown). */
  problem: string | null;
}

type Action =
  | { type: 'stats'; msg: StatsMessage }
  | { type: 'events'; events: FeedEvent[] }
  | { type: 'connected'; connected: boolean }
  | { type: 'problem'; problem: string }
  | { type: 'clearFeed' };

const initial: LiveState = {
  stats: undefined,
  series: [],
  feed: [],
  anomalies: [],
  hits: {},
  leaderMoves: {},
  connected: false,
  problem: null,
};

const ANOMALY_LIMIT = 100;

function withEvents(state: LiveState, events: readonly FeedEvent[]) {
  return {
    feed: mergeFeed(state.feed, events),
    anomalies: mergeFeed(state.anomalies, events.filter(isAnomaly), ANOMALY_LIMIT),
  };
}

function reduce(state: LiveState, action: Action): LiveState {
  switch (action.type) {
    case 'stats':
      // GET /api/stats and the socket can deliver the same or an older message.
      if (state.stats && Date.parse(action.msg.at) <= Date.parse(state.stats.at)) return state;
      return {
        ...state,
        stats: action.msg,
        series: appendSample(state.series, action.msg),
        hits: trackHits(state.hits, state.stats, action.msg),
        leaderMoves: trackLeaderMoves(
          state.leaderMoves,
          state.stats?.kafka,
          action.msg.kafka,
          action.msg.at,
        ),
        ...withEvents(state, action.msg.events),
        problem: null,
      };
    case 'events':
      return { ...state, ...withEvents(state, action.events) };
    case 'connected':
      return { ...state, connected: action.connected };
    case 'problem':
      return { ...state, problem: action.problem };
    case 'clearFeed':
      return { ...state, feed: [], anomalies: [] };
  }
}

/**
 * Follows dashboard-api's stats stream (socket.io, same origin). The first paint comes
 * from GET /api/stats and /api/events so the page is not empty until the first tick.
 */
export function useLiveStats(): LiveState & { clearFeed: () => void } {
  const [state, dispatch] = useReducer(reduce, initial);
  useEffect(() => {
    let closed = false;
    void api(statsMessageSchema, 'GET', API_ROUTES.stats.path)
      .then((msg) => !closed && dispatch({ type: 'stats', msg }))
      .catch(() => undefined);
    void api(eventsResponseSchema, 'GET', `${API_ROUTES.events.path}?limit=100`)
      .then((r) => !closed && dispatch({ type: 'events', events: r.events }))
      .catch(() => undefined);
    const socket = io({ path: '/socket.io' });
    socket.on('connect', () => dispatch({ type: 'connected', connected: true }));
    socket.on('disconnect', () => dispatch({ type: 'connected', connected: false }));
    socket.on(SOCKET_EVENTS.stats, (raw: unknown) => {
      const parsed = statsMessageSchema.safeParse(raw);
      if (parsed.success) dispatch({ type: 'stats', msg: parsed.data });
      else
        dispatch({
          type: 'problem',
          problem: `stats message does not match the contract: ${parsed.error.issues[0]?.message ?? ''}`,
        });
    });
    return () => {
      closed = true;
      socket.close();
    };
  }, []);
  return { ...state, clearFeed: () => dispatch({ type: 'clearFeed' }) };
}
