import { join } from 'node:path';
import { findRepoRoot } from '@outbox/dev-stack';
import { describe, expect, it } from 'vitest';
import { formatReport, runSoak } from '../src/index.ts';

/**
 * The short soak of CI: two minutes of traffic with a fault about every 11 s
 * (every kind, from SIGKILLs to a PostgreSQL restart), on a stack of its own, then
 * the auditor. `npm run soak -- --minutes 10` is the long one.
 */
describe('chaos soak (short)', () => {
  it('outbox mode, inbox on, sharded: every invariant holds after the faults', async () => {
    const lines: string[] = [];
    const report = await runSoak({
      minutes: 2,
      seed: 20261202,
      rate: 8,
      faultEverySeconds: 11,
      // Not .data/soak: a developer's `npm run soak` may be running there.
      dataDir: join(findRepoRoot(), '.data', 'soak-test'),
      log: (line) => {
        lines.push(line);
        process.stderr.write(`[soak] ${line}\n`);
      },
    });
    process.stderr.write(`${formatReport(report)}\n`);
    expect(report.drained).toBe(true);
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
    expect(kinds).toBeGreaterThanOrEqual(5);
    expect(Object.values(report.restarts).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(report.ok).toBe(true);
  });
});
