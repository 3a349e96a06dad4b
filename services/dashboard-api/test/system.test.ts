import { randomBytes } from 'node:crypto';
import { audit } from '@outbox/lab';
import { startSystem, type System } from '@outbox/demo';
import { io as connect, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { journeySchema, type Journey, type StatsMessage } from '../src/contract.ts';
import { request } from './support/dashboard.ts';
import { freeSystemPorts, waitFor } from '@outbox/testkit';

/**
 * The dashboard on the real backend: order-api, two publisher-worker replicas and
 * inventory-consumer as supervised processes (startSystem), dashboard-api among them
 * as its own process. Orders go through the real relay, Kafka and consumer.
 */
describe('dashboard-api on the running system', () => {
  let system: System;
  let dashboard: string;
  let socket: Socket;
  let latest: StatsMessage | undefined;

  beforeAll(async () => {
    const id = randomBytes(3).toString('hex');
    // Away from the demo's 3000–3004 and below the ephemeral range (testkit).
    const ports = await freeSystemPorts();
    system = await startSystem({
      schema: `dash_${id}`,
      topicPrefix: `dash-${id}.`,
      ports,
      dashboard: true,
      // The services' OpenTelemetry SDKs export to the dashboard (demo --tracing).
      tracing: true,
      env: { LOG_LEVEL: 'warn', SETTLE_SECONDS: '3' },
      log: (line) => process.stderr.write(`[system] ${line}\n`),
    });
    await system.waitReady();
    dashboard = system.urls.dashboard!;
    socket = connect(dashboard, { transports: ['websocket'] });
    socket.on('stats', (m: StatsMessage) => (latest = m));
  });
  afterAll(async () => {
    socket?.close();
    await system?.stop();
  });

  const stats = (what: string, check: (m: StatsMessage) => boolean, timeoutMs = 90_000) =>
    waitFor(() => (latest && check(latest) ? latest : undefined), { timeoutMs, what }).catch(
      (error: Error) => {
        throw new Error(
          `${error.message}; last: ${JSON.stringify({ ...latest, events: undefined })}`,
        );
      },
    );
  const order = async (quantity = 1) => {
    const res = await fetch(`${system.urls.orderApi}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 3, sku: 'sku-2', quantity }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { orderId: string }).orderId;
  };
  const journey = (orderId: string, done: (j: Journey) => boolean) =>
    waitFor(
      async () => {
        const res = await request<Journey>(dashboard, `/api/orders/${orderId}/journey`);
        return res.status === 200 && done(res.body) ? res.body : undefined;
      },
      { timeoutMs: 60_000, what: `the journey of ${orderId}` },
    );

  it('streams every process up, and both replicas sharing the 64 shards', async () => {
    // Each replica records its own view of the split: wait for the views to agree.
    const shardsOf = (s: StatsMessage) =>
      s.processes.flatMap((p) => p.replicas.flatMap((r) => (r.alive ? r.shards : [])));
    const m = await stats(
      'all up, shards split',
      (s) =>
        s.processes.length === 5 &&
        s.processes.every((p) => p.state === 'up') &&
        s.replicas.filter((r) => r.alive && r.sharded && r.shards.length > 0).length === 2 &&
        shardsOf(s).length === 64,
    );
    expect(shardsOf(m).sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i));
    expect(m.processes.map((p) => p.name).sort()).toEqual([
      'dashboard-api',
      'inventory-consumer',
      'order-api',
      'publisher-worker-1',
      'publisher-worker-2',
    ]);
  });

  it('shows one order through every step: order → outbox → Kafka offset → inbox → reservation', async () => {
    const orderId = await order(2);
    const j = await journey(orderId, (x) => x.steps.every((s) => s.done));
    journeySchema.parse(j);
    expect(j.order).toMatchObject({ id: orderId, mode: 'outbox', quantity: 2, sku: 'sku-2' });
    const [row] = j.outbox;
    expect(row).toMatchObject({
      eventType: 'OrderCreated',
      status: 'sent',
      topic: `${system.topicPrefix}orders.events`,
    });
    const [delivery] = j.deliveries;
    expect(delivery).toMatchObject({ eventId: row?.id, outcome: 'processed', topic: row?.topic });
    expect(Number(delivery?.offset)).toBeGreaterThanOrEqual(0);
    // Where the relay recorded the broker's acknowledgement is where the consumer read it.
    expect(row).toMatchObject({
      kafkaPartition: delivery?.partition,
      kafkaOffset: delivery?.offset,
    });
    expect(j.inbox).toEqual([
      expect.objectContaining({
        eventId: row?.id,
        partition: delivery?.partition,
        offset: delivery?.offset,
      }),
    ]);
    expect(j.reservations).toEqual([
      expect.objectContaining({ eventId: row?.id, quantity: 2, sku: 'sku-2' }),
    ]);
    expect(j.steps.map((s) => s.step)).toEqual([
      'order',
      'outbox',
      'kafka',
      'inbox',
      'reservation',
    ]);

    // Its trace, exported by the three services to the dashboard: every leg timed.
    const traced = await journey(
      orderId,
      (x) => x.traces.length === 1 && x.traces[0]!.legs.every((l) => l !== null),
    );
    const [trace] = traced.traces;
    expect(trace).toMatchObject({ eventId: row?.id, eventType: 'OrderCreated' });
    expect(trace!.services).toEqual(
      expect.arrayContaining(['inventory-consumer', 'order-api', 'publisher-worker']),
    );
    expect(trace!.legs.map((l) => l!.leg)).toEqual([
      'commit',
      'outbox',
      'produce',
      'consume',
      'reservation',
    ]);
    // One after another, on the one clock of this machine.
    const starts = trace!.legs.map((l) => Date.parse(l!.from));
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    expect(trace!.deliveries.map((d) => d.duplicate)).toEqual([false]);
    await stats(
      'the order counted',
      (s) => s.totals.orders >= 1 && s.totals.published >= 1 && s.totals.deliveries >= 1,
    );
  });

  it('switches order-api to naive mode: the next order has no outbox row and still arrives', async () => {
    expect(
      (await request(dashboard, '/api/mode', { method: 'PUT', json: { mode: 'naive' } })).status,
    ).toBe(200);
    const orderId = await order();
    const j = await journey(orderId, (x) => x.deliveries.length > 0 && x.reservations.length > 0);
    expect(j.order?.mode).toBe('naive');
    expect(j.outbox).toEqual([]);
    expect(j.steps.find((s) => s.step === 'outbox')).toMatchObject({ done: false });
    expect(j.steps.find((s) => s.step === 'outbox')?.detail).toContain('naive');
    expect(
      (await request(dashboard, '/api/mode', { method: 'PUT', json: { mode: 'outbox' } })).status,
    ).toBe(200);
  });

  it('drives the traffic generator through the traffic_rate setting', async () => {
    const before = latest?.totals.orders ?? 0;
    expect(
      (await request(dashboard, '/api/traffic', { method: 'PUT', json: { rate: 8 } })).status,
    ).toBe(200);
    await waitFor(() => system.traffic.currentRate === 8, { what: 'the demo to follow the rate' });
    await stats(
      'orders flowing',
      (s) => s.totals.orders >= before + 10 && s.rates.ordersPerSecond > 0,
    );
    await stats(
      'events flowing',
      (s) => s.rates.publishPerSecond > 0 && s.rates.consumePerSecond > 0,
    );
    expect(
      (await request(dashboard, '/api/traffic', { method: 'PUT', json: { rate: 0 } })).status,
    ).toBe(200);
    await waitFor(() => system.traffic.currentRate === 0, { what: 'the traffic to stop' });
  });

  it('kill mid-publish: the worker restarts, the inbox catches the duplicates, counters match audit()', async () => {
    // The previous test's traffic drained first: the kill must hit a send of this test's
    // orders, whose journeys are searched below (a CI run timed out on "a trace with the
    // duplicate delivery", as did 1 local run of 2).
    await stats('the outbox drained', (s) => s.outbox.pending === 0);
    const armed = await request(dashboard, '/api/failure-points/worker.kill_mid_publish', {
      method: 'POST',
      json: { mode: 'once' },
    });
    expect(armed.status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push(await order());
    const m = await stats(
      'a worker restarted and duplicates caught',
      (s) =>
        s.processes.some(
          (p) => p.kind === 'publisher-worker' && p.restarts >= 1 && p.state === 'up',
        ) &&
        s.invariants.duplicatesCaught >= 1 &&
        s.outbox.pending === 0,
      200_000,
    );
    expect(m.invariants.doubleProcessed).toBe(0);
    expect(m.latestAnomaly?.kind).toMatch(/duplicate_caught/);
    // Settled: the stream's counters are the auditor's.
    await waitFor(
      async () => {
        const report = await audit(system.pool, { settleSeconds: 3 });
        const s = latest!;
        return s.invariants.duplicatesCaught === report.duplicatesCaught &&
          s.invariants.duplicatesDelivered === report.duplicatesDelivered &&
          s.invariants.doubleProcessed === report.doubleProcessed &&
          s.invariants.ordersWithoutEvents === report.ordersWithoutEvents &&
          s.invariants.phantomEvents === report.phantomEvents &&
          s.totals.orders === report.orders
          ? report
          : undefined;
      },
      { timeoutMs: 60_000, what: 'the stream to agree with audit()' },
    );
    // The trace of an event sent twice: the second handling's inbox.check says duplicate.
    const twice = await waitFor(
      async () => {
        for (const id of ids) {
          const j = (await request<Journey>(dashboard, `/api/orders/${id}/journey`)).body;
          if (j.traces[0]?.deliveries.length === 2) return j.traces[0];
        }
        return undefined;
      },
      { timeoutMs: 60_000, what: 'a trace with the duplicate delivery' },
    );
    expect(twice.deliveries.map((d) => d.duplicate)).toEqual([false, true]);
  }, 300_000);

  it('resets the demo data: the stream starts over from zero', async () => {
    expect((await request(dashboard, '/api/reset', { method: 'POST' })).status).toBe(200);
    const m = await stats('zeroed', (s) => s.totals.orders === 0 && s.totals.deliveries === 0);
    expect(m.invariants).toEqual({
      ordersWithoutEvents: 0,
      neverPublished: 0,
      publishedNotConsumed: 0,
      phantomEvents: 0,
      duplicatesDelivered: 0,
      duplicatesCaught: 0,
      doubleProcessed: 0,
      fifoViolations: 0,
      consumerDeadLettered: 0,
      outboxDeadLettered: 0,
    });
    // The system keeps working after the reset.
    const orderId = await order();
    await journey(orderId, (x) => x.steps.every((s) => s.done));
    await stats('counted again', (s) => s.totals.orders === 1 && s.totals.deliveries === 1);
  });
});
