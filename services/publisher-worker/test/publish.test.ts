import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTestDb,
  createTopicPrefix,
  eventIds,
  readTopic,
  type ServiceProcess,
  startService,
  stopAll,
  type TestDb,
  testKafka,
  waitFor,
} from '@outbox/testkit';
import { append, orderEvents, pending, workerEnv } from './support/outbox.ts';

describe('publisher-worker process: relays the outbox', () => {
  const kafka = testKafka();
  let db: TestDb;
  let prefix: string;
  let topic: string;
  const procs: ServiceProcess[] = [];

  beforeEach(async () => {
    db = await createTestDb();
    ({ prefix, topic } = await createTopicPrefix(kafka, { partitions: 6 }));
  });
  afterEach(async () => {
    await stopAll(procs);
    await db.close();
  });

  it('publishes a backlog and marks it sent; serves /healthz and /metrics', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 40; i += 1) ids.push(...(await append(db, orderEvents(5))));
    const worker = await startService(workerEnv(db, prefix, { REPLICA_ID: 'w1' }));
    procs.push(worker);

    await waitFor(async () => (await pending(db)) === 0, { what: 'backlog drained' });
    const received = await readTopic(kafka, topic, { until: (r) => eventIds(r).size >= 200 });
    expect(eventIds(received)).toEqual(new Set(ids));
    // Headers carry the ids the consumer needs; key = aggregate id.
    const first = received.find((m) => m.headers.event_id === ids[0]);
    expect(first?.headers).toMatchObject({ event_type: 'OrderCreated', event_version: '2' });
    expect(first?.key).toBe(first?.headers.aggregate_id);

    const health = await fetch(`${worker.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true, replicaId: 'w1', sharded: true });
    const metrics = await (await fetch(`${worker.url}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`outbox_published_total\\{topic="${topic}"\\} 200`));
    expect(metrics).toMatch(/outbox_pending 0/);
    expect(metrics).toMatch(/outbox_worker_sharded 1/);
    expect(metrics).toMatch(/process_cpu_seconds_total/);
  });

  it('wakes on NOTIFY for events appended while it runs', async () => {
    // A long fallback poll: only the LISTEN/NOTIFY wake-up can make this fast.
    const worker = await startService(
      workerEnv(db, prefix, { REPLICA_ID: 'w1', POLL_INTERVAL_MS: '60000' }),
    );
    procs.push(worker);
    await new Promise((resolve) => setTimeout(resolve, 500)); // let it fall asleep
    const started = Date.now();
    await append(db, orderEvents(3));
    await waitFor(async () => (await pending(db)) === 0, {
      what: 'woken relay',
      timeoutMs: 10_000,
    });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('SIGTERM: finishes, leaves the membership and exits with code 0', async () => {
    const worker = await startService(workerEnv(db, prefix, { REPLICA_ID: 'w1' }));
    procs.push(worker);
    await append(db, orderEvents(10));
    await waitFor(async () => (await pending(db)) === 0, { what: 'drained' });

    const result = await worker.stop();
    expect(result).toEqual({ code: 0, signal: null });
    expect(worker.lines.some((l) => l.msg === 'stopped')).toBe(true);
    const { rows } = await db.pool.query('SELECT * FROM outbox_relay_members');
    expect(rows).toEqual([]);
  });
});
