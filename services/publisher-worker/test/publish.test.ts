import { describe, expect, it } from 'vitest';
import { eventIds, readTopic, startService, testKafka, waitFor } from '@outbox/testkit';
import { append, orderEvents, pending, workerEnv, useWorkerFixture } from './support/outbox.ts';

describe('publisher-worker process: relays the outbox', () => {
  const kafka = testKafka();
  const fx = useWorkerFixture(kafka);

  it('publishes a backlog and marks it sent; serves /healthz and /metrics', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 40; i += 1) ids.push(...(await append(fx.db, orderEvents(5))));
    const worker = await startService(workerEnv(fx.db, fx.prefix, { REPLICA_ID: 'w1' }));
    fx.procs.push(worker);

    await waitFor(async () => (await pending(fx.db)) === 0, { what: 'backlog drained' });
    const received = await readTopic(kafka, fx.topic, { until: (r) => eventIds(r).size >= 200 });
    expect(eventIds(received)).toEqual(new Set(ids));
    // Headers carry the ids the consumer needs; key = aggregate id.
    const first = received.find((m) => m.headers.event_id === ids[0]);
    expect(first?.headers).toMatchObject({ event_type: 'OrderCreated', event_version: '2' });
    expect(first?.key).toBe(first?.headers.aggregate_id);

    const health = await fetch(`${worker.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true, replicaId: 'w1', sharded: true });
    const metrics = await (await fetch(`${worker.url}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`outbox_published_total\\{topic="${fx.topic}"\\} 200`));
    expect(metrics).toMatch(/outbox_pending 0/);
    expect(metrics).toMatch(/outbox_worker_sharded 1/);
    expect(metrics).toMatch(/process_cpu_seconds_total/);
  });

  it('wakes on NOTIFY for events appended while it runs', async () => {
    // A long fallback poll: only the LISTEN/NOTIFY wake-up can make this fast.
    const worker = await startService(
      workerEnv(fx.db, fx.prefix, { REPLICA_ID: 'w1', POLL_INTERVAL_MS: '60000' }),
    );
    fx.procs.push(worker);
    await new Promise((resolve) => setTimeout(resolve, 500)); // let it fall asleep
    const started = Date.now();
    await append(fx.db, orderEvents(3));
    await waitFor(async () => (await pending(fx.db)) === 0, {
      what: 'woken relay',
      timeoutMs: 10_000,
    });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('SIGTERM: finishes, leaves the membership and exits with code 0', async () => {
    const worker = await startService(workerEnv(fx.db, fx.prefix, { REPLICA_ID: 'w1' }));
    fx.procs.push(worker);
    await append(fx.db, orderEvents(10));
    await waitFor(async () => (await pending(fx.db)) === 0, { what: 'drained' });

    const result = await worker.stop();
    expect(result).toEqual({ code: 0, signal: null });
    expect(worker.lines.some((l) => l.msg === 'stopped')).toBe(true);
    const { rows } = await fx.db.pool.query('SELECT * FROM outbox_relay_members');
    expect(rows).toEqual([]);
  });
});
