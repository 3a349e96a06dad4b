import { io as connect } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { ApiError, StatsMessage } from '../src/contract.ts';
import { startTestDashboard, type TestDashboard } from './support/dashboard.ts';
import { createTestDb, type TestDb } from '@outbox/testkit';
import { runToExit } from './support/process.ts';
import { loadConfig } from '../src/config.ts';

const TOKEN = 'test-token-0123456789abcdef';

/** Connects a socket.io client with `origin`; resolves with the first message or the refusal. */
function firstStats(url: string, origin?: string): Promise<StatsMessage | Error> {
  const socket = connect(url, {
    transports: ['websocket'],
    reconnection: false,
    ...(origin ? { extraHeaders: { origin } } : {}),
  });
  return new Promise<StatsMessage | Error>((resolve) => {
    socket.once('stats', (m: StatsMessage) => resolve(m));
    socket.once('connect_error', (e) => resolve(e));
  }).finally(() => socket.close());
}

describe('security: who may change the system', () => {
  let db: TestDb;
  let dash: TestDashboard;

  beforeAll(async () => {
    db = await createTestDb({ stock: 1000, max: 6 });
    dash = await startTestDashboard(db, {
      CONTROL_TOKEN: TOKEN,
      ALLOWED_ORIGINS: 'http://dashboard.example:3000',
    });
  });
  afterAll(async () => {
    await dash?.close();
    await db?.close();
  });

  it('refuses to start bound beyond loopback without a token, naming the variable', async () => {
    const { code, output } = await runToExit({
      DATABASE_URL: inject('databaseUrl'),
      DATABASE_SCHEMA: db.schema,
      KAFKA_BROKERS: inject('kafkaBrokers').join(','),
      HOST: '0.0.0.0',
      PORT: '0',
    });
    expect(code).not.toBe(0);
    expect(output).toContain('CONTROL_TOKEN is required when HOST (0.0.0.0) is not a loopback');
  });

  it('control endpoints: 401 without or with a wrong token, 200 with it', async () => {
    const controls: [string, string, unknown][] = [
      ['PUT', '/api/mode', { mode: 'naive' }],
      ['PUT', '/api/traffic', { rate: 3 }],
      ['POST', '/api/failure-points/consumer.inbox_off', { mode: 'on' }],
      ['POST', '/api/reset', {}],
      ['POST', '/api/outbox/1/requeue', {}],
    ];
    for (const [method, path, json] of controls) {
      const none = await dash.request<ApiError>(path, { method, json });
      expect(none.status, `${method} ${path} without a token`).toBe(401);
      expect(none.body.error).toMatch(/Bearer/);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const wrong = await dash.request(path, {
        method,
        json,
        headers: { authorization: `Bearer ${TOKEN}x` },
      });
      expect(wrong.status, `${method} ${path} with a wrong token`).toBe(401);
    }
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect(
      (await dash.request('/api/mode', { method: 'PUT', json: { mode: 'naive' }, headers: auth }))
        .status,
    ).toBe(200);
    const armed = await dash.request<{ mode: string; active: boolean }>(
      '/api/failure-points/consumer.inbox_off',
      { method: 'POST', json: { mode: 'on' }, headers: auth },
    );
    expect(armed.status).toBe(200);
    expect(armed.body).toMatchObject({ mode: 'on', active: true });
    // Nothing changed by the refused calls: only the authorised ones landed.
    const { rows } = await db.pool.query<{ key: string; value: unknown }>(
      'SELECT key, value FROM demo_settings ORDER BY key',
    );
    expect(rows).toEqual([{ key: 'order_mode', value: 'naive' }]);
  });

  it('read-only views stay open without a token', async () => {
    for (const path of [
      '/api/state',
      '/api/stats',
      '/api/events',
      '/api/outbox',
      '/api/audit',
      '/healthz',
      '/metrics',
    ]) {
      expect((await dash.request(path)).status, path).toBe(200);
    }
    const state = await dash.request<{ controlRequiresToken: boolean; chaosEnabled: boolean }>(
      '/api/state',
    );
    expect(state.body).toMatchObject({ controlRequiresToken: true, chaosEnabled: true });
  });

  it('CORS: an allowed origin gets the headers, any other origin is refused', async () => {
    const ok = await dash.request('/api/state', {
      headers: { origin: 'http://dashboard.example:3000' },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('http://dashboard.example:3000');
    const preflight = await fetch(`${dash.url}/api/mode`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://dashboard.example:3000',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'content-type,authorization',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/authorization/i);

    const evil = await dash.request<ApiError>('/api/state', {
      headers: { origin: 'http://evil.example' },
    });
    expect(evil.status).toBe(403);
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    // A cross-site POST carrying the token (stolen or not) is refused by origin first.
    const csrf = await dash.request('/api/reset', {
      method: 'POST',
      json: {},
      headers: { origin: 'http://evil.example', authorization: `Bearer ${TOKEN}` },
    });
    expect(csrf.status).toBe(403);
  });

  it('socket.io: the stream is open to allowed origins and refused to others', async () => {
    const allowed = await firstStats(dash.url, 'http://dashboard.example:3000');
    expect(allowed).not.toBeInstanceOf(Error);
    expect((allowed as StatsMessage).v).toBe(1);
    const noOrigin = await firstStats(dash.url);
    expect(noOrigin).not.toBeInstanceOf(Error);
    const refused = await firstStats(dash.url, 'http://evil.example');
    expect(refused).toBeInstanceOf(Error);
  });
});

describe('security: CHAOS_ENABLED=false', () => {
  let db: TestDb;
  let dash: TestDashboard;

  beforeAll(async () => {
    db = await createTestDb({ stock: 1000, max: 6 });
    dash = await startTestDashboard(db, { CHAOS_ENABLED: 'false' });
  });
  afterAll(async () => {
    await dash?.close();
    await db?.close();
  });

  it('failure points answer 403 and say why; nothing is armed; the rest works', async () => {
    const res = await dash.request<ApiError>('/api/failure-points/worker.kill_mid_publish', {
      method: 'POST',
      json: { mode: 'once' },
    });
    expect(res.status).toBe(403);
    expect(res.body.error).toContain('CHAOS_ENABLED=false');
    const { rows } = await db.pool.query("SELECT * FROM failure_points WHERE mode <> 'off'");
    expect(rows).toHaveLength(0);
    const state = await dash.request<{ chaosEnabled: boolean; controlRequiresToken: boolean }>(
      '/api/state',
    );
    expect(state.body).toMatchObject({ chaosEnabled: false, controlRequiresToken: false });
    expect(dash.dashboard.engine.latest?.chaosEnabled).toBe(false);
    // Loopback without a token: the other control endpoints are open to this machine.
    expect((await dash.request('/api/traffic', { method: 'PUT', json: { rate: 2 } })).status).toBe(
      200,
    );
  });
});

describe('security: chaos is off unless enabled', () => {
  it('defaults CHAOS_ENABLED to false (the demo turns it on)', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://x@127.0.0.1/db',
      KAFKA_BROKERS: 'k:9092',
    });
    expect(config.CHAOS_ENABLED).toBe(false);
    expect(
      loadConfig({
        DATABASE_URL: 'postgres://x@127.0.0.1/db',
        KAFKA_BROKERS: 'k:9092',
        CHAOS_ENABLED: 'true',
      }).CHAOS_ENABLED,
    ).toBe(true);
  });
});
