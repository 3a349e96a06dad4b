import type { AddressInfo } from 'node:net';
import { silentLogger } from '@outbox/core';
import { FailurePoints } from '@outbox/lab';
import { logLevel } from 'kafkajs';
import { inject } from 'vitest';
import { createApp } from '../../src/app.ts';
import { loadConfig, type AppConfig } from '../../src/config.ts';
import { createKafka, type KafkaParts } from '../../src/kafka.ts';
import type { TestDb } from './db.ts';

export interface TestApp {
  url: string;
  config: AppConfig;
  kafka: KafkaParts;
  failurePoints: FailurePoints;
  /** fetch against the app; `json` sets the body and Content-Type. */
  request(
    path: string,
    init?: RequestInit & { json?: unknown },
  ): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }>;
  close(): Promise<void>;
}

/**
 * The real app in-process, listening on a free port, with a real pool (the test's
 * schema), a real connected producer and real failure points (following NOTIFY).
 */
export async function startTestApp(
  db: TestDb,
  prefix: string,
  env: Record<string, string> = {},
): Promise<TestApp> {
  const config = loadConfig({
    DATABASE_URL: db.databaseUrl,
    DATABASE_SCHEMA: db.schema,
    KAFKA_BROKERS: inject('kafkaBrokers').join(','),
    TOPIC_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    // The tests break things: the naive failure points cut real sockets (off by default).
    CHAOS_ENABLED: 'true',
    ...env,
  });
  const kafka = createKafka(config, silentLogger, { kafkaLogLevel: logLevel.NOTHING });
  await kafka.producer.connect();
  const failurePoints = new FailurePoints(db.pool, {
    listen: { connectionString: db.databaseUrl, options: `-c search_path=${db.schema}` },
  });
  await failurePoints.start();
  const app = createApp({
    config,
    pool: db.pool,
    producer: kafka.producer,
    network: kafka.network,
    failurePoints,
    log: silentLogger,
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    config,
    kafka,
    failurePoints,
    async request(path, init = {}) {
      const { json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (json !== undefined) headers.set('content-type', 'application/json');
      const res = await fetch(`${url}${path}`, {
        method: json !== undefined ? 'POST' : 'GET',
        ...rest,
        headers,
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });
      const text = await res.text();
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = { text };
      }
      return { status: res.status, body, headers: res.headers };
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await failurePoints.stop();
      await kafka.producer.disconnect();
    },
  };
}
