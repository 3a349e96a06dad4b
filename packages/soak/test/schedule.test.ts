import { describe, expect, it } from 'vitest';
import { FAULT_KINDS, faultSchedule } from '../src/index.ts';

describe('the soak fault schedule', () => {
  it('is a function of the seed: same seed, same schedule; another seed, another one', () => {
    const a = faultSchedule({ seed: 7, durationMs: 600_000 });
    expect(faultSchedule({ seed: 7, durationMs: 600_000 })).toEqual(a);
    expect(faultSchedule({ seed: 8, durationMs: 600_000 })).not.toEqual(a);
  });

  it('meets every kind in each round, inside the margins, at increasing times', () => {
    const s = faultSchedule({ seed: 3, durationMs: 600_000, meanGapMs: 20_000, marginMs: 10_000 });
    expect(new Set(s.slice(0, FAULT_KINDS.length).map((f) => f.kind))).toEqual(
      new Set(FAULT_KINDS),
    );
    expect(s.every((f, i) => i === 0 || f.atMs > s[i - 1]!.atMs)).toBe(true);
    expect(s[0]!.atMs).toBeGreaterThanOrEqual(10_000);
    expect(s.at(-1)!.atMs).toBeLessThan(590_000);
    for (const f of s.filter((x) => x.kind === 'worker.sigkill')) expect([1, 2]).toContain(f.param);
    for (const f of s.filter((x) => x.kind === 'worker.kafka_outage')) {
      expect(f.param).toBeGreaterThanOrEqual(3);
      expect(f.param).toBeLessThanOrEqual(8);
    }
  });
});
