import { randomBytes } from 'node:crypto';
import { silentLogger } from '@outbox/core';
import { inject } from 'vitest';
import { loadConfig, type DashboardConfig } from '../../src/config.ts';
import { startDashboard, type Dashboard } from '../../src/server.ts';
import type { TestDb } from '@outbox/testkit';

export interface Reply<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

export interface TestDashboard {
  url: string;
  dashboard: Dashboard;
  config: DashboardConfig;
  /** fetch against the dashboard; `json` sets the body and Content-Type. */
  request<T = Record<string, unknown>>(
    path: string,
    init?: RequestInit & { json?: unknown },
  ): Promise<Reply<T>>;
  close(): Promise<void>;
}

/** The real dashboard in-process on a free loopback port, on the test's schema. */
export async function startTestDashboard(
  db: TestDb,
  env: Record<string, string> = {},
): Promise<TestDashboard> {
  const config = loadConfig({
    DATABASE_URL: db.databaseUrl,
    DATABASE_SCHEMA: db.schema,
    KAFKA_BROKERS: inject('kafkaBrokers').join(','),
    PORT: '0',
    LOG_LEVEL: 'silent',
    SETTLE_SECONDS: '1',
    WEB_DIST: '/nonexistent-web-dist',
    // A topic (and consumer group) of its own: no other suite's lag on it.
    TOPIC_PREFIX: `dash-${randomBytes(4).toString('hex')}.`,
    // The tests arm failure points; one suite checks the default (off).
    CHAOS_ENABLED: 'true',
    ...env,
  });
  const dashboard = await startDashboard({ config, pool: db.pool, log: silentLogger });
  return {
    url: dashboard.url,
    dashboard,
    config,
    request: (path, init) => request(dashboard.url, path, init),
    close: () => dashboard.close(),
  };
}

export async function request<T = Record<string, unknown>>(
  base: string,
  path: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<Reply<T>> {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (json !== undefined) headers.set('content-type', 'application/json');
  const res = await fetch(`${base}${path}`, {
    method: json !== undefined ? 'POST' : 'GET',
    ...rest,
    headers,
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = { text };
  }
  return { status: res.status, body: body as T, headers: res.headers };
}
