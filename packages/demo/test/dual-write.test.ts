import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailurePoint } from '@outbox/core';
import {
  auditUntil,
  startScenarioSystem,
  undelivered,
  waitRestarted,
  type OrderClient,
} from './support/scenario.ts';
import type { FailurePoints } from '@outbox/core';
import type { System } from '../src/index.ts';

/**
 * The seed's two dual-write failures, on the whole backend as real processes, judged by
 * the auditor; each followed by the same traffic in outbox mode, which loses nothing.
 * Reproduce by hand: `npm run demo`, then `npm run chaos -- arm <point> once` and POST
 * /orders?mode=naive (README, "Failure scenarios").
 */
describe('dual-write failures, naive vs outbox (auditor)', () => {
  let system: System;
  let points: FailurePoints;
  let orders: OrderClient;

  beforeAll(async () => {
    ({ system, points, orders } = await startScenarioSystem('dualwrite'));
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('naive + network drop after commit loses events; outbox mode through a Kafka outage loses none', async () => {
    await points.arm(FailurePoint.naiveNetworkDropAfterCommit, { mode: 'times', times: 3 });
    const naive = await orders.createMany('naive', 8);
    // The order is committed, then the produce fails for real: 502 to the client.
    expect(naive.filter((r) => r.status === 502)).toHaveLength(3);
    expect(naive.filter((r) => r.status === 201)).toHaveLength(5);
    const afterNaive = await auditUntil(
      system,
      (r) => r.orders === 8 && r.ordersWithoutEvents === 3,
    );
    expect(afterNaive.phantomEvents).toBe(0);

    // The same traffic in outbox mode while the workers cannot reach Kafka for 4 s.
    await points.arm(FailurePoint.workerKafkaOutage, {
      mode: 'on',
      params: { until: Date.now() + 4_000, seconds: 4 },
    });
    const outbox = await orders.createMany('outbox', 8);
    expect(outbox.every((r) => r.status === 201)).toBe(true);
    const afterOutbox = await auditUntil(
      system,
      (r) => r.orders === 16 && r.pending === 0 && r.ordersWithoutEvents === 3,
    );
    expect(await undelivered(system, 'outbox')).toBe(0);
    expect(afterOutbox.duplicatesDelivered).toBe(0);
    expect(afterOutbox.phantomEvents).toBe(0);
  });

  it('naive + crash after publish, before commit leaves a phantom event; outbox mode with a crashed API leaves none', async () => {
    const before = await auditUntil(system, (r) => r.pending === 0);
    const restarts = system.supervisor.status().find((s) => s.name === 'order-api')!.restarts;
    await points.arm(FailurePoint.naiveCrashBeforeCommit, { mode: 'once' });
    // The process dies after the broker's ack: the client sees the connection break.
    const crashed = await orders.create('naive');
    expect(crashed.status).toBe(0);
    await waitRestarted(system, 'order-api', restarts + 1);
    await system.waitReady();
    const phantom = await auditUntil(system, (r) => r.phantomEvents === before.phantomEvents + 1);
    expect(phantom.orders).toBe(before.orders);

    // Outbox mode: the event is part of the business transaction, so a process killed
    // anywhere in the request leaves either both or neither. SIGKILL order-api mid-traffic.
    const traffic = orders.createMany('outbox', 30);
    await new Promise((r) => setTimeout(r, 300));
    const pid = system.supervisor.status().find((s) => s.name === 'order-api')!.pid!;
    process.kill(pid, 'SIGKILL');
    const results = await traffic;
    expect(results.some((r) => r.status === 0)).toBe(true);
    await waitRestarted(system, 'order-api', restarts + 2);
    const after = await auditUntil(
      system,
      (r) => r.pending === 0 && r.ordersWithoutEvents === phantom.ordersWithoutEvents,
    );
    expect(after.phantomEvents).toBe(phantom.phantomEvents);
    expect(await undelivered(system, 'outbox')).toBe(0);
    expect(after.orders).toBeGreaterThanOrEqual(
      phantom.orders + results.filter((r) => r.status === 201).length,
    );
  });
});
