import { describe, expect, it } from 'vitest';
import { ProgressWatch, type ProgressSample } from '../src/index.ts';

/** The watch's judgement, fed samples by hand on a clock of its own (pure logic). */
function harness() {
  let now = 0;
  let next: ProgressSample = { sent: 0, pending: 0, delivered: 0, consumerBehind: false };
  let excused = false;
  const lines: string[] = [];
  const watch = new ProgressWatch({
    sample: async () => next,
    clock: () => now,
    recentFaults: (from, until) => [`faults in ${from}..${until}`],
    excused: () => excused,
    log: (line) => lines.push(line),
  });
  return {
    watch,
    lines,
    /** Advances the clock by `ms` in 5 s looks, each reading `sample`. */
    async run(ms: number, sample: Partial<ProgressSample>, options: { excused?: boolean } = {}) {
      excused = options.excused ?? false;
      for (let t = 0; t < ms; t += 5_000) {
        now += 5_000;
        next = { ...next, ...sample };
        await watch.tick();
      }
    },
  };
}

describe('the soak progress watch', () => {
  it('calls a minute without progress while work waits a stall, dated from the last progress', async () => {
    const h = harness();
    await h.run(5_000, { sent: 9, delivered: 4, pending: 3, consumerBehind: true });
    await h.run(5_000, { sent: 10, delivered: 5 });
    // The consumer stops after t = 10 s; the relay keeps sending.
    for (let i = 1; i <= 14; i += 1) await h.run(5_000, { sent: 10 + i });
    expect(h.watch.stalls).toEqual([
      { who: 'consumer', sinceMs: 10_000, untilMs: undefined, after: ['faults in -50000..10000'] },
    ]);
    await h.run(5_000, { delivered: 6 });
    expect(h.watch.stalls[0]!.untilMs).toBe(85_000);
    expect(h.lines.join('\n')).toMatch(/STALL: the consumer has moved nothing since t\+10\.0s/);
  });

  it('no stall when nothing waits, nor for the time the broker or PostgreSQL is down', async () => {
    const h = harness();
    await h.run(120_000, { sent: 5, delivered: 5, pending: 0, consumerBehind: false });
    expect(h.watch.stalls).toEqual([]);
    // Waiting work, but 50 s of it excused: 30 s counted, no stall.
    await h.run(50_000, { pending: 7, consumerBehind: true }, { excused: true });
    await h.run(30_000, {});
    expect(h.watch.stalls).toEqual([]);
    // 35 s more: a stall, dated from the last progress before the excused time.
    await h.run(35_000, {});
    expect(h.watch.stalls.map((s) => [s.who, s.sinceMs])).toEqual([
      ['relay', 120_000],
      ['consumer', 120_000],
    ]);
  });
});
