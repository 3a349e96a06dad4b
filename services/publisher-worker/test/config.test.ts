import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';

// Pure: the relay's timing invariant is checked when the configuration is parsed.
describe('publisher-worker config: relay timings', () => {
  const env = { DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', KAFKA_BROKERS: '127.0.0.1:9092' };

  it('defaults fit: 5 s poll, 4 s backoff cap, TTL derived', () => {
    const config = loadConfig(env);
    expect(config).toMatchObject({ POLL_INTERVAL_MS: 5_000, FAILURE_BACKOFF_MAX_MS: 4_000 });
    expect(config.MEMBER_TTL_MS).toBeUndefined();
  });

  it('a long poll alone is fine (the TTL follows it)', () => {
    expect(loadConfig({ ...env, POLL_INTERVAL_MS: '60000' }).POLL_INTERVAL_MS).toBe(60_000);
  });

  it('a TTL that the poll outlasts stops the start, naming the variables', () => {
    expect(() => loadConfig({ ...env, POLL_INTERVAL_MS: '5000', MEMBER_TTL_MS: '5000' })).toThrow(
      /MEMBER_TTL_MS: does not fit POLL_INTERVAL_MS and FAILURE_BACKOFF_MAX_MS: memberTtlMs 5000 is too short/,
    );
  });
});
