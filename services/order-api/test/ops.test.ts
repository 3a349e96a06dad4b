import type { AddressInfo } from 'node:net';
import { silentLogger } from '@outbox/core';
import { FailurePoints } from '@outbox/lab';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { createTestDb, type TestDb } from './support/db.ts';
import { createTopicPrefix, testKafka } from '@outbox/testkit';

describe('health, readiness, metrics', () => {
  let db: TestDb;
  let app: TestApp;

  beforeEach(async () => {
    db = await createTestDb();
    const { prefix } = await createTopicPrefix(testKafka());
    app = await startTestApp(db, prefix);
  });
  afterEach(async () => {
    await app.close();
    await db.close();
  });

  it('/healthz and /readyz answer 200 with PostgreSQL up', async () => {
    expect(await app.request('/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await app.request('/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });
  });

  it('/readyz is 503 when PostgreSQL does not answer', async () => {
    // A pool on a port nothing listens on: connecting fails at once.
    const dead = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none' });
    dead.on('error', () => undefined);
    const broken = createApp({
      config: app.config,
      pool: dead,
      producer: app.kafka.producer,
      network: app.kafka.network,
      failurePoints: new FailurePoints(dead),
      log: silentLogger,
    });
    const server = broken.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ error: 'database unavailable' });
      const healthz = await fetch(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`,
      );
      expect(healthz.status).toBe(200);
    } finally {
      server.close();
      await dead.end();
    }
  });

  it('/metrics exposes HTTP, order and naive-failure metrics plus process metrics', async () => {
    await app.request('/orders', { json: { userId: 1, sku: 'sku-1', quantity: 1 } });
    await app.request('/orders', { json: { userId: 1, sku: 'nope', quantity: 1 } });
    const res = await fetch(`${app.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    const text = await res.text();
    for (const name of [
      'http_requests_total',
      'http_request_duration_seconds_bucket',
      'orders_created_total',
      'naive_publish_failures_total',
      'process_cpu_user_seconds_total',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(text).toContain(name);
    }
    expect(text).toMatch(/^orders_created_total\{mode="outbox"\} 1$/m);
    expect(text).toMatch(/^http_requests_total\{method="POST",route="\/orders",status="201"\} 1$/m);
    expect(text).toMatch(/^http_requests_total\{method="POST",route="\/orders",status="422"\} 1$/m);
  });

  it('config: defaults, and errors that name the variable', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://x@y/z', KAFKA_BROKERS: 'a:1, b:2' });
    expect(config).toMatchObject({
      PORT: 3001,
      HOST: '127.0.0.1',
      DEFAULT_MODE: 'outbox',
      BODY_LIMIT: '16kb',
      KAFKA_BROKERS: ['a:1', 'b:2'],
      DATABASE_SCHEMA: 'public',
    });
    let message = '';
    try {
      loadConfig({ KAFKA_BROKERS: 'a:1', DEFAULT_MODE: 'yolo', PORT: 'x' });
    } catch (error) {
      message = (error as Error).message;
    }
    for (const name of ['DATABASE_URL', 'DEFAULT_MODE', 'PORT']) expect(message).toContain(name);
  });
});
