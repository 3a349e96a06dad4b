import { FailurePoint, FailurePoints } from '@outbox/lab';
import type { Kafka } from 'kafkajs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './support/db.ts';
import { createTopicPrefix, readTopic, testKafka } from '@outbox/testkit';
import { startService, type ServiceProcess } from './support/process.ts';

describe('the service as a real process', () => {
  let db: TestDb;
  let kafka: Kafka;
  let prefix: string;
  let topic: string;
  let service: ServiceProcess | undefined;

  beforeEach(async () => {
    db = await createTestDb();
    kafka = testKafka();
    ({ prefix, topic } = await createTopicPrefix(kafka));
  });
  afterEach(async () => {
    if (service && service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
    service = undefined;
    await db.close();
  });

  it('naive crash before commit: SIGKILL after the ack, no order, a phantom event in Kafka', async () => {
    // Armed before the process starts: it loads the failure points when it starts.
    await new FailurePoints(db.pool).arm(FailurePoint.naiveCrashBeforeCommit, { mode: 'once' });
    service = await startService(db, prefix, { DEFAULT_MODE: 'naive' });

    const request = fetch(`${service.url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'crash-key' },
      body: JSON.stringify({ userId: 4, sku: 'sku-3', quantity: 2 }),
    });
    await expect(request).rejects.toThrow();
    expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });

    // The transaction died with the process: no order, no key, no outbox row.
    expect(await db.counts()).toEqual({ orders: 0, outbox: 0, idempotency_keys: 0 });
    const received = await readTopic(kafka, topic, { until: (r) => r.length >= 1 });
    expect(received).toHaveLength(1);
    const phantom = received[0];
    expect(phantom?.headers).toMatchObject({
      event_type: 'OrderCreated',
      event_version: '2',
      event_id: expect.stringMatching(/^naive-/),
    });
    expect(JSON.parse(phantom?.value ?? '')).toMatchObject({
      userId: 4,
      sku: 'sku-3',
      quantity: 2,
    });
    const { rows } = await db.pool.query('SELECT 1 FROM orders WHERE id = $1', [phantom?.key]);
    expect(rows).toHaveLength(0);
    const fp = await db.pool.query('SELECT mode, fired FROM failure_points WHERE name = $1', [
      FailurePoint.naiveCrashBeforeCommit,
    ]);
    expect(fp.rows[0]).toEqual({ mode: 'off', fired: 1 });
  });

  it('serves, then stops cleanly on SIGTERM', async () => {
    service = await startService(db, prefix);
    const created = await fetch(`${service.url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 1, sku: 'sku-1', quantity: 1 }),
    });
    expect(created.status).toBe(201);
    expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
    service.child.kill('SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(service.lines.some((l) => l.msg === 'stopped')).toBe(true);
  });
});
