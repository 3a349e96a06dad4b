import { io as connect, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statsMessageSchema, type FeedEvent, type StatsMessage } from '../src/contract.ts';
import { startTestDashboard, type TestDashboard } from './support/dashboard.ts';
import { createTestDb, type TestDb, waitFor } from '@outbox/testkit';
import { createOrder, deliver, markSent } from './support/rows.ts';

describe('the socket.io stats stream', () => {
  let db: TestDb;
  let dash: TestDashboard;
  let socket: Socket;
  const messages: StatsMessage[] = [];

  beforeAll(async () => {
    db = await createTestDb({ stock: 1000, max: 6 });
    dash = await startTestDashboard(db);
    socket = connect(dash.url, { transports: ['websocket'] });
    socket.on('stats', (m: StatsMessage) => {
      messages.push(m);
    });
  });
  afterAll(async () => {
    socket?.close();
    await dash?.close();
    await db?.close();
  });

  const latest = () => messages[messages.length - 1];
  const until = (what: string, check: (m: StatsMessage) => boolean) =>
    waitFor(() => messages.find(check), {
      timeoutMs: 30_000,
      what,
    });

  it('pushes valid messages every ≤ 500 ms (configured), none skipped', async () => {
    await waitFor(() => messages.length >= 12, { timeoutMs: 60_000, what: '12 messages' });
    for (const m of messages) expect(statsMessageSchema.parse(m)).toBeTruthy();
    expect(latest()?.intervalMs).toBeLessThanOrEqual(500);
    // Consecutive ticks: none skipped between the messages this client got.
    const ticks = messages.map((m) => m.tick);
    for (let i = 1; i < ticks.length; i += 1) expect(ticks[i]).toBe((ticks[i - 1] ?? 0) + 1);
  });

  it('moves when rows appear: pending, published, deliveries, the feed', async () => {
    const start = messages.length;
    const orders = await Promise.all([1, 2, 3, 4, 5].map(() => createOrder(db.pool)));
    const pending = await until('5 pending', (m) => m.outbox.pending === 5);
    expect(pending.totals.orders).toBe(5);
    expect(pending.outbox.lagSeconds).toBeGreaterThan(0);

    await markSent(
      db.pool,
      orders.map((o) => o.outboxId!),
    );
    const sent = await until(
      '5 published',
      (m) => m.totals.published === 5 && m.outbox.pending === 0,
    );
    expect(sent.outbox.lagSeconds).toBe(0);
    expect(messages.slice(start).some((m) => m.rates.publishPerSecond > 0)).toBe(true);

    for (const o of orders) await deliver(db.pool, { orderId: o.orderId, eventId: o.outboxId! });
    const first = orders[0]!;
    await deliver(db.pool, {
      orderId: first.orderId,
      eventId: first.outboxId!,
      outcome: 'duplicate',
    });
    const delivered = await until('6 deliveries', (m) => m.totals.deliveries === 6);
    expect(delivered.invariants).toMatchObject({ duplicatesDelivered: 1, duplicatesCaught: 1 });
    expect(messages.slice(start).some((m) => m.rates.consumePerSecond > 0)).toBe(true);

    // Every delivery reached the feed exactly once, the duplicate marked as caught.
    const feed = messages
      .slice(start)
      .flatMap((m) => m.events)
      .filter((e): e is Extract<FeedEvent, { kind: 'delivery' }> => e.kind === 'delivery');
    expect(feed).toHaveLength(6);
    expect(new Set(feed.map((e) => e.id)).size).toBe(6);
    expect(feed.filter((e) => e.caughtByInbox).map((e) => e.eventId)).toEqual([first.outboxId]);
    expect(delivered.latestAnomaly).toMatchObject({
      kind: 'duplicate_caught',
      aggregateId: first.orderId,
    });
    expect(delivered.scenarios.latest?.id).toBe('happy_path');

    // The same lines over REST, for a client that connects later.
    const events = await dash.request<{ events: FeedEvent[] }>('/api/events?limit=3');
    expect(events.body.events.map((e) => e.id)).toEqual(feed.slice(-3).map((e) => e.id));
  });

  it('shows the processes and relay replicas with their shards', async () => {
    await db.pool.query(
      `INSERT INTO demo_processes (name, kind, state, pid, restarts, started_at, url) VALUES
         ('publisher-worker-1', 'publisher-worker', 'up', 101, 0, now(), 'http://127.0.0.1:1'),
         ('publisher-worker-2', 'publisher-worker', 'restarting', NULL, 2, NULL, 'http://127.0.0.1:2'),
         ('inventory-consumer', 'inventory-consumer', 'down', NULL, 0, NULL, 'http://127.0.0.1:3')`,
    );
    await db.pool.query(
      `INSERT INTO outbox_relay_members (replica_id, sharded, shards) VALUES
         ('${db.schema}-worker-1', true, '{3,1,2}'), ('${db.schema}-worker-2', false, '{}')`,
    );
    const m = await until('3 processes', (s) => s.processes.length === 3);
    const byName = new Map(m.processes.map((p) => [p.name, p]));
    expect(byName.get('publisher-worker-1')).toMatchObject({ state: 'up', pid: 101, restarts: 0 });
    expect(byName.get('publisher-worker-1')?.replicas).toEqual([
      expect.objectContaining({
        replicaId: `${db.schema}-worker-1`,
        sharded: true,
        shards: [1, 2, 3],
        alive: true,
      }),
    ]);
    expect(byName.get('publisher-worker-2')).toMatchObject({ state: 'restarting', restarts: 2 });
    expect(byName.get('publisher-worker-2')?.replicas[0]).toMatchObject({ sharded: false });
    expect(byName.get('inventory-consumer')).toMatchObject({ state: 'down', replicas: [] });
    expect(m.replicas).toHaveLength(2);
  });
});
