import { join } from 'node:path';
import { findRepoRoot } from '@outbox/dev-stack';
import { describe, expect, it } from 'vitest';
import { faultSchedule, formatReport, runSoak, type FaultKind } from '../src/index.ts';

/**
 * The short soak of CI: two minutes of traffic with a fault about every 11 s on a
 * stack of its own, then the auditor. Eight kinds, so that each comes once: the
 * failure points, SIGKILLs, a broker and a PostgreSQL restart, and two of the fault
 * proxy's ambiguous faults (the relay's produce answers lost; the consumer's database
 * link silent). `npm run soak` (every kind, 100 orders/s) is the long one.
 */
const KINDS: FaultKind[] = [
  'worker.kill_mid_publish',
  'worker.sigkill',
  'consumer.sigkill',
  'consumer.crash_before_offset_commit',
  'kafka.restart',
  'postgres.restart',
  'worker.kafka_drop_responses',
  'consumer.pg_black_hole',
];
const SEED = 20261206;

describe('chaos soak (short)', () => {
  it('outbox mode, inbox on, sharded: every invariant holds after the faults', async () => {
    // The schedule is a function of the seed: with this one each kind comes once, and
    // the proxy's two come before the broker and PostgreSQL restarts (a link fault
    // while its server is down would be skipped: it carries nothing then).
    const planned = faultSchedule({
      seed: SEED,
      durationMs: 120_000,
      meanGapMs: 11_000,
      kinds: KINDS,
    });
    expect(planned.map((f) => f.kind).sort()).toEqual([...KINDS].sort());
    const at = (kind: FaultKind) => planned.findIndex((f) => f.kind === kind);
    const restarts = Math.min(at('kafka.restart'), at('postgres.restart'));
    expect(at('worker.kafka_drop_responses')).toBeLessThan(restarts);
    expect(at('consumer.pg_black_hole')).toBeLessThan(restarts);

    const lines: string[] = [];
    const report = await runSoak({
      minutes: 2,
      seed: SEED,
      rate: 10,
      faultEverySeconds: 11,
      kinds: KINDS,
      // Not .data/soak: a developer's `npm run soak` may be running there.
      dataDir: join(findRepoRoot(), '.data', 'soak-test'),
      log: (line) => {
        lines.push(line);
        process.stderr.write(`[soak] ${line}\n`);
      },
    });
    process.stderr.write(`${formatReport(report)}\n`);
    expect(report.drained).toBe(true);
    expect(report.topic?.sentNotOnTopic).toBe(0);
    expect(report.audit).toMatchObject({
      ordersWithoutEvents: 0,
      phantomEvents: 0,
      doubleProcessed: 0,
      fifoViolations: 0,
      pending: 0,
      reservationMismatches: 0,
      consumerDeadLettered: 0,
      outboxDeadLettered: 0,
    });
    expect(report.audit.orders).toBeGreaterThan(100);
    // The faults were real: most kinds were injected, and processes really died.
    const kinds = Object.values(report.injected).filter((n) => n > 0).length;
    expect(kinds).toBeGreaterThanOrEqual(6);
    expect(Object.values(report.restarts).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    // The proxy's faults were on and hit traffic: the broker's answers to the relay were
    // dropped (at 10 orders/s the relay produces several times a second).
    expect(report.injected['worker.kafka_drop_responses']).toBe(1);
    expect(report.injected['consumer.pg_black_hole']).toBe(1);
    const dropped = Object.entries(report.proxies)
      .filter(([link]) => link.startsWith('publisher-worker') && link.includes(' kafka '))
      .reduce((sum, [, stats]) => sum + stats.bytesDropped, 0);
    expect(dropped).toBeGreaterThan(0);
    expect(report.ok).toBe(true);
  });
});
