import { describe, expect, it } from 'vitest';
import { describeFault, FAULT_KINDS, faultSchedule, parseFaultKinds } from '../src/index.ts';

describe('the soak fault schedule', () => {
  it('is a function of the seed: same seed, same schedule; another seed, another one', () => {
    const a = faultSchedule({ seed: 7, durationMs: 600_000 });
    expect(faultSchedule({ seed: 7, durationMs: 600_000 })).toEqual(a);
    expect(faultSchedule({ seed: 8, durationMs: 600_000 })).not.toEqual(a);
  });

  it('meets every kind in each round, inside the margins, at increasing times', () => {
    const s = faultSchedule({ seed: 3, durationMs: 900_000, meanGapMs: 20_000, marginMs: 10_000 });
    expect(s.length).toBeGreaterThan(FAULT_KINDS.length);
    expect(new Set(s.slice(0, FAULT_KINDS.length).map((f) => f.kind))).toEqual(
      new Set(FAULT_KINDS),
    );
    expect(s.every((f, i) => i === 0 || f.atMs > s[i - 1]!.atMs)).toBe(true);
    expect(s[0]!.atMs).toBeGreaterThanOrEqual(10_000);
    expect(s.at(-1)!.atMs).toBeLessThan(890_000);
  });

  it('gives each kind its replica, duration and delay in the stated ranges', () => {
    const s = faultSchedule({ seed: 11, durationMs: 3_600_000, meanGapMs: 10_000 });
    const of = (kind: string) => s.filter((f) => f.kind === kind);
    for (const f of s) {
      const oneReplica = /^worker\.(sigkill|sigstop|kafka_drop|kafka_black|pg_)/.test(f.kind);
      if (oneReplica) expect([1, 2]).toContain(f.replica);
      else expect(f.replica).toBe(0);
      if (f.kind.endsWith('.pg_slow')) {
        expect(f.delayMs).toBeGreaterThanOrEqual(200);
        expect(f.delayMs).toBeLessThanOrEqual(800);
      } else expect(f.delayMs).toBe(0);
    }
    const range = (kind: string) => of(kind).map((f) => f.seconds);
    for (const n of range('worker.kafka_outage')) expect(n >= 3 && n <= 8).toBe(true);
    for (const n of range('worker.kafka_drop_responses')) expect(n >= 2 && n <= 5).toBe(true);
    for (const n of range('worker.sigstop')) expect(n >= 10 && n <= 14).toBe(true);
    // Longer than the consumer's 10 s session timeout: its member is expelled.
    for (const n of range('postgres.outage')) expect(n >= 20 && n <= 30).toBe(true);
    for (const n of range('worker.sigkill')) expect(n).toBe(0);
    expect(new Set(of('worker.sigkill').map((f) => f.replica))).toEqual(new Set([1, 2]));
  });

  it('keeps to the kinds asked for, each once per round', () => {
    const kinds = parseFaultKinds(
      'worker.kafka_drop_responses, consumer.pg_black_hole,kafka.restart',
    );
    const s = faultSchedule({ seed: 5, durationMs: 120_000, meanGapMs: 11_000, kinds });
    expect(new Set(s.map((f) => f.kind))).toEqual(new Set(kinds));
    expect(new Set(s.slice(0, 3).map((f) => f.kind)).size).toBe(3);
    expect(() => parseFaultKinds('worker.sigkill,bogus')).toThrow('unknown fault kind "bogus"');
    expect(
      describeFault({ atMs: 0, kind: 'worker.pg_slow', replica: 2, seconds: 14, delayMs: 600 }),
    ).toBe('worker.pg_slow (replica 2, 14 s, 600 ms)');
  });
});
