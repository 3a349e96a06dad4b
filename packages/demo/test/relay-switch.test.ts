import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectState } from '@outbox/dev-stack';
import { readSlotLag } from '@outbox/core';
import {
  FailurePoint,
  readRelayMode,
  requestRelay,
  type FailurePoints,
  type RelayKind,
} from '@outbox/lab';
import { auditUntil, startScenarioSystem } from './support/scenario.ts';
import type { System } from '../src/index.ts';

/** outbox_published_total of every worker, summed (what the polling relay has sent). */
async function publishedByWorkers(system: System): Promise<number> {
  let total = 0;
  for (const url of system.urls.workers) {
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const line of text.split('\n'))
      if (line.startsWith('outbox_published_total')) total += Number(line.split(' ').at(-1));
  }
  return total;
}

async function waitActive(system: System, relay: RelayKind, timeoutMs = 240_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mode = await readRelayMode(system.pool);
    if (mode.active.relay === relay && mode.phase === null) return;
    if (Date.now() > deadline)
      throw new Error(`relay not ${relay} after ${timeoutMs} ms: ${JSON.stringify(mode)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Resolves with Connect's pid once a Connect other than `not` runs for the system and
 * reads its slot (the handover starts it again after a kill or a down window).
 */
async function connectRunning(system: System, not?: number): Promise<number> {
  let pid: number | undefined;
  await expect
    .poll(
      async () => {
        const state = await connectState();
        pid = state?.pid;
        if (!state || state.pid === not || state.schema !== system.schema) return false;
        return (await readSlotLag(system.pool, state.slot))?.active ?? false;
      },
      { timeout: 180_000, interval: 500 },
    )
    .toBe(true);
  return pid!;
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The demo's live relay switch, polling relay ⇄ Debezium CDC, on the whole backend
 * under traffic, judged by the auditor: nothing lost, every duplicate caught, FIFO
 * per aggregate kept, and while Debezium publishes the workers publish nothing.
 */
describe('switching the relay live: polling relay ⇄ Debezium CDC', () => {
  let system: System;
  let points: FailurePoints;

  beforeAll(async () => {
    ({ system, points } = await startScenarioSystem('relay'));
    system.traffic.setRate(20);
  });
  afterAll(async () => {
    system?.traffic.stop();
    await system?.stop();
  });

  it('to CDC: Debezium publishes, the workers only confirm; Connect killed (signal, button) and down loses nothing', async () => {
    await auditUntil(system, (r) => r.orders >= 40);
    await requestRelay(system.pool, 'cdc');
    await waitActive(system, 'cdc');
    for (const url of system.urls.workers)
      await expect
        .poll(
          async () => ((await (await fetch(`${url}/healthz`)).json()) as { role: string }).role,
          { timeout: 10_000 },
        )
        .toBe('confirm');

    const before = await publishedByWorkers(system);
    const { orders } = await auditUntil(system, () => true);
    await delay(5_000);
    // Connect killed mid-stream: the handover starts it again on its slot and offsets.
    const connect = (await connectState())!;
    expect(connect.schema).toBe(system.schema);
    const { slot } = connect;
    process.kill(-connect.pid, 'SIGKILL');
    // The dashboard's buttons: failure points the handover carries out.
    const restarted = await connectRunning(system, connect.pid);
    await points.arm(FailurePoint.connectKillMidStream, { mode: 'once' });
    await connectRunning(system, restarted);
    await points.arm(FailurePoint.connectDown, {
      mode: 'on',
      params: { until: Date.now() + 15_000, seconds: 15 },
    });
    // Connect was reading the slot: only the down window stops it now.
    await expect
      .poll(async () => (await readSlotLag(system.pool, slot))?.active, {
        timeout: 30_000,
        interval: 250,
      })
      .toBe(false);
    const down = (await readSlotLag(system.pool, slot))!;
    await delay(3_000);
    // Nobody reads the slot: what is appended meanwhile is kept for Connect.
    expect((await readSlotLag(system.pool, slot))!.retainedBytes).toBeGreaterThan(
      down.retainedBytes,
    );
    expect(await connectState()).toBeUndefined();
    await connectRunning(system);
    // Orders made under CDC reach the consumer, and the confirmer marks them sent.
    await auditUntil(system, (r) => r.orders > orders + 100, 120_000);
    const { rows } = await system.pool.query<{ m: string }>(
      'SELECT max(id)::text AS m FROM outbox',
    );
    await expect
      .poll(
        async () =>
          (
            await system.pool.query<{ n: number }>(
              'SELECT count(*)::int AS n FROM outbox WHERE id <= $1 AND sent_at IS NULL',
              [rows[0]!.m],
            )
          ).rows[0]!.n,
        { timeout: 60_000, interval: 500 },
      )
      .toBe(0);
    expect(await publishedByWorkers(system)).toBe(before);
  });

  it('back to polling: the workers relay again, and the whole run audits clean', async () => {
    await requestRelay(system.pool, 'polling');
    await waitActive(system, 'polling');
    const slots = await system.pool.query(
      'SELECT 1 FROM pg_replication_slots WHERE slot_name LIKE $1',
      [`%${system.schema}%`],
    );
    expect(slots.rowCount).toBe(0);
    const before = await publishedByWorkers(system);
    await delay(3_000);
    system.traffic.stop();
    const report = await auditUntil(
      system,
      (r) => r.pending === 0 && r.ordersWithoutEvents === 0,
      120_000,
    );
    process.stderr.write(`[relay] audit after both switches: ${JSON.stringify(report)}\n`);
    expect(await publishedByWorkers(system)).toBeGreaterThan(before);
    expect(report.phantomEvents).toBe(0);
    expect(report.duplicatesCaught).toBe(report.duplicatesDelivered);
    expect(report.doubleProcessed).toBe(0);
    expect(report.fifoViolations).toBe(0);
    expect(report.reservationMismatches).toBe(0);
    expect(report.consumerDeadLettered).toBe(0);
    expect(report.outboxDeadLettered).toBe(0);
  });
});
