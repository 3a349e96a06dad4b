import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTestDb,
  createTopicPrefix,
  dropRole,
  listenersOn,
  secretRole,
  type ServiceProcess,
  startService,
  stopAll,
  type TestDb,
  testKafka,
  waitFor,
} from '@outbox/testkit';
import { append, orderEvents, pending, workerEnv } from './support/outbox.ts';

describe('publisher-worker exposure: address, control surface, secrets', () => {
  const kafka = testKafka();
  let db: TestDb;
  let role: string | undefined;
  const procs: ServiceProcess[] = [];

  beforeEach(async () => {
    db = await createTestDb();
  });
  afterEach(async () => {
    await stopAll(procs);
    if (role) await dropRole(db, role);
    await db.close();
  });

  it('listens on 127.0.0.1 only, offers no control or chaos route, never prints the password', async () => {
    const { prefix } = await createTopicPrefix(kafka, { partitions: 6 });
    const secretDb = await secretRole(db);
    role = secretDb.role;
    const env = workerEnv(db, prefix, { DATABASE_URL: secretDb.url, REPLICA_ID: 'w-sec' });
    delete env.HOST; // the default is on trial
    const worker = await startService(env);
    procs.push(worker);
    const port = Number(new URL(worker.url).port);
    expect(listenersOn(port)).toEqual(['0100007F']);

    // Two routes, both read-only: the relay's switches live in PostgreSQL.
    for (const [method, path] of [
      ['POST', '/chaos/arm'],
      ['PUT', '/failure-points/worker.kill_mid_publish'],
      ['POST', '/control/stop'],
      ['POST', '/healthz'],
      ['POST', '/metrics'],
      ['POST', '/requeue'],
    ] as const) {
      const res = await fetch(`${worker.url}${path}`, { method, body: '{"mode":"on"}' });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const armed = await db.pool.query("SELECT name FROM failure_points WHERE mode <> 'off'");
    expect(armed.rows).toEqual([]);

    await append(db, orderEvents(3));
    await waitFor(async () => (await pending(db)) === 0, { what: 'the first events relayed' });
    // Every connection of the worker dies, as in a PostgreSQL restart; it must recover
    // (and log it) without printing the URL unmasked.
    await db.pool.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1',
      [role],
    );
    await append(db, orderEvents(3));
    await waitFor(async () => (await pending(db)) === 0, {
      what: 'events relayed after the connections died',
      timeoutMs: 60_000,
    });
    for (const path of ['/healthz', '/metrics']) {
      const text = await (await fetch(`${worker.url}${path}`)).text();
      expect(text).not.toContain(secretDb.secret);
      expect(text).not.toContain(encodeURIComponent(secretDb.secret));
    }

    await worker.stop();
    const output = worker.output();
    expect(output).toMatch(/terminat|connection/i);
    expect(output).toContain(`${role}:***@`);
    expect(output).not.toContain(secretDb.secret);
    expect(output).not.toContain(encodeURIComponent(secretDb.secret));
  });
});
