import type { Producer } from 'kafkajs';
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
import { consumerEnv, deliveries, orderCreated, produce, testProducer } from './support/events.ts';

describe('inventory-consumer exposure: address, control surface, secrets', () => {
  const kafka = testKafka();
  let db: TestDb;
  let role: string | undefined;
  let producer: Producer;
  const procs: ServiceProcess[] = [];

  beforeEach(async () => {
    db = await createTestDb({ stock: 100 });
    producer = await testProducer(kafka);
  });
  afterEach(async () => {
    await stopAll(procs);
    await producer.disconnect();
    if (role) await dropRole(db, role);
    await db.close();
  });

  it('listens on 127.0.0.1 only, offers no control or chaos route, never prints the password', async () => {
    const { prefix, topic } = await createTopicPrefix(kafka, { deadLetter: true });
    const secretDb = await secretRole(db);
    role = secretDb.role;
    const env = consumerEnv(db, prefix, { DATABASE_URL: secretDb.url });
    delete env.HOST; // the default is on trial
    const consumer = await startService(env);
    procs.push(consumer);
    const port = Number(new URL(consumer.url).port);
    expect(listenersOn(port)).toEqual(['0100007F']);

    for (const [method, path] of [
      ['POST', '/chaos/arm'],
      ['PUT', '/failure-points/consumer.inbox_off'],
      ['POST', '/control/pause'],
      ['POST', '/inbox/off'],
      ['POST', '/healthz'],
      ['POST', '/metrics'],
    ] as const) {
      const res = await fetch(`${consumer.url}${path}`, { method, body: '{"mode":"on"}' });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const armed = await db.pool.query("SELECT name FROM failure_points WHERE mode <> 'off'");
    expect(armed.rows).toEqual([]);

    await produce(producer, topic, [orderCreated({ quantity: 1 })]);
    await waitFor(async () => (await deliveries(db)).length === 1, { what: 'the first event' });
    await db.pool.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1',
      [role],
    );
    await produce(producer, topic, [orderCreated({ quantity: 1 })]);
    await waitFor(async () => (await deliveries(db)).length === 2, {
      what: 'an event applied after the connections died',
      timeoutMs: 60_000,
    });
    for (const path of ['/healthz', '/metrics']) {
      const text = await (await fetch(`${consumer.url}${path}`)).text();
      expect(text).not.toContain(secretDb.secret);
      expect(text).not.toContain(encodeURIComponent(secretDb.secret));
    }

    await consumer.stop();
    const output = consumer.output();
    expect(output).toContain(`${role}:***@`);
    expect(output).not.toContain(secretDb.secret);
    expect(output).not.toContain(encodeURIComponent(secretDb.secret));
  });
});
