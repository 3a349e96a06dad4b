import { describe, expect, it } from 'vitest';
import { appendSample } from '../src/live/series.ts';
import { statsMessage } from './stats-fixture.ts';

const at = (s: number) => new Date(Date.UTC(2026, 11, 2, 10, 0, s)).toISOString();

describe('appendSample', () => {
  it('keeps the numbers of each message in time order', () => {
    let series = appendSample([], statsMessage({ at: at(0), outbox: { pending: 4 } }));
    series = appendSample(
      series,
      statsMessage({
        at: at(1),
        outbox: { pending: 7, lagSeconds: 1.5 },
        rates: { publishPerSecond: 20 },
      }),
    );
    expect(series.map((s) => [s.pending, s.lagSeconds, s.publishPerSecond])).toEqual([
      [4, 0, 0],
      [7, 1.5, 20],
    ]);
  });

  it('drops a message that is not newer than the last sample (first paint, then socket)', () => {
    const first = appendSample([], statsMessage({ at: at(5), outbox: { pending: 1 } }));
    expect(appendSample(first, statsMessage({ at: at(5), outbox: { pending: 9 } }))).toBe(first);
    expect(appendSample(first, statsMessage({ at: at(4) }))).toBe(first);
  });

  it('forgets samples older than the window', () => {
    let series = appendSample([], statsMessage({ at: at(0) }), 10_000);
    series = appendSample(series, statsMessage({ at: at(6) }), 10_000);
    series = appendSample(series, statsMessage({ at: at(12) }), 10_000);
    expect(series.map((s) => new Date(s.t).getUTCSeconds())).toEqual([6, 12]);
    series = appendSample(series, statsMessage({ at: at(59) }), 10_000);
    expect(series).toHaveLength(1);
  });
});
