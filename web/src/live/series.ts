import type { StatsMessage } from '@outbox/dashboard-api/contract';

/** One point of the live charts, taken from one stats message. */
export interface Sample {
  /** Server time of the message, epoch ms. */
  t: number;
  pending: number;
  lagSeconds: number;
  publishPerSecond: number;
  consumePerSecond: number;
  ordersPerSecond: number;
}

/** The charts show the last five minutes. */
export const SERIES_WINDOW_MS = 5 * 60_000;

export function toSample(msg: StatsMessage): Sample {
  return {
    t: Date.parse(msg.at),
    pending: msg.outbox.pending,
    lagSeconds: msg.outbox.lagSeconds,
    publishPerSecond: msg.rates.publishPerSecond,
    consumePerSecond: msg.rates.consumePerSecond,
    ordersPerSecond: msg.rates.ordersPerSecond,
  };
}

/**
 * Adds a message to the series and forgets what fell out of the window. The first
 * paint comes from GET /api/stats and then the socket repeats messages, so a sample
 * not newer than the last one is dropped rather than drawn twice.
 */
export function appendSample(
  series: readonly Sample[],
  msg: StatsMessage,
  windowMs = SERIES_WINDOW_MS,
): readonly Sample[] {
  const sample = toSample(msg);
  if (!Number.isFinite(sample.t)) return series;
  const last = series.at(-1);
  if (last && sample.t <= last.t) return series;
  const from = sample.t - windowMs;
  const start = series.findIndex((s) => s.t >= from);
  const kept = start < 0 ? [] : start === 0 ? series : series.slice(start);
  return [...kept, sample];
}
