import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  OutboxRelay,
  RelayTimingError,
  resolveRelayTimings,
  MEMBER_TTL_MARGIN_MS,
} from '../src/index.ts';

// Pure logic: the invariant between the poll, the failure backoff and the membership TTL.
describe('relay timings: TTL > max(poll, backoff cap × 1.2) + margin, checked at start-up', () => {
  it('the defaults fit: 5 s poll, 4 s backoff cap, 10 s TTL', () => {
    expect(resolveRelayTimings()).toEqual({
      pollIntervalMs: 5_000,
      failureBackoffMaxMs: 4_000,
      memberTtlMs: 10_000,
    });
  });

  it('without an explicit TTL, it follows the poll: a 60 s poll gets a 120 s TTL', () => {
    expect(resolveRelayTimings({ pollIntervalMs: 60_000 }).memberTtlMs).toBe(120_000);
    expect(resolveRelayTimings({ failureBackoffMaxMs: 30_000 }).memberTtlMs).toBe(72_000);
    // A short poll still keeps the margin.
    expect(resolveRelayTimings({ pollIntervalMs: 100, failureBackoffMaxMs: 100 }).memberTtlMs).toBe(
      120 + MEMBER_TTL_MARGIN_MS,
    );
  });

  it.each([
    // The old combination: TTL 5 s == poll 5 s, backoff cap 10 s.
    { pollIntervalMs: 5_000, failureBackoffMaxMs: 10_000, memberTtlMs: 5_000 },
    { pollIntervalMs: 5_000, memberTtlMs: 5_000 },
    { pollIntervalMs: 5_000, memberTtlMs: 6_999 },
    { failureBackoffMaxMs: 10_000, memberTtlMs: 12_000 },
  ])('refuses a TTL that a sleep or a backoff outlasts: %o', (timings) => {
    expect(() => resolveRelayTimings(timings)).toThrow(RelayTimingError);
    expect(() => resolveRelayTimings(timings)).toThrow(/memberTtlMs \d+ is too short/);
  });

  it('accepts the smallest TTL that fits', () => {
    expect(resolveRelayTimings({ pollIntervalMs: 5_000, memberTtlMs: 7_000 }).memberTtlMs).toBe(
      7_000,
    );
  });

  it.each([{ pollIntervalMs: 0 }, { failureBackoffMaxMs: -1 }, { memberTtlMs: Number.NaN }])(
    'refuses a non-positive value: %o',
    (timings) => {
      expect(() => resolveRelayTimings(timings)).toThrow(RelayTimingError);
    },
  );

  it('an OutboxRelay with a bad combination fails at construction, not later', () => {
    const pool = new pg.Pool();
    try {
      const error = (() => {
        try {
          new OutboxRelay({
            pool,
            producer: {} as never,
            topics: {},
            pollIntervalMs: 5_000,
            memberTtlMs: 5_000,
          });
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(RelayTimingError);
      expect((error as RelayTimingError).retriable).toBe(false);
    } finally {
      void pool.end();
    }
  });
});
