import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createTestDb, type TestDb } from './support/db.ts';
import { createTopicPrefix, dropRole, listenersOn, secretRole, testKafka } from '@outbox/testkit';

const serviceDir = fileURLToPath(new URL('..', import.meta.url));

interface Spawned {
  output(): string;
  port: number;
  stop(): Promise<void>;
}

/** The real service with only the given environment (no HOST: the default is on trial). */
async function spawnService(env: Record<string, string>): Promise<Spawned> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: serviceDir,
    env: { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let raw = '';
  child.stdout.on('data', (c: Buffer) => (raw += c.toString()));
  child.stderr.on('data', (c: Buffer) => (raw += c.toString()));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const deadline = Date.now() + 60_000;
  let port: number | undefined;
  while (port === undefined) {
    const match = /"port":(\d+)[^\n]*"msg":"listening/.exec(raw);
    if (match) port = Number(match[1]);
    else if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`order-api did not start:\n${raw}`);
    else await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    output: () => raw,
    port,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await closed;
    },
  };
}

describe('order-api exposure: address, control surface, secrets', () => {
  let db: TestDb;
  let role: string | undefined;
  let service: Spawned | undefined;

  beforeEach(async () => {
    db = await createTestDb();
  });
  afterEach(async () => {
    await service?.stop();
    if (role) await dropRole(db, role);
    await db.close();
  });

  it('listens on 127.0.0.1 only, offers no control or chaos route, never prints the password', async () => {
    const { prefix } = await createTopicPrefix(testKafka());
    const secretDb = await secretRole(db);
    role = secretDb.role;
    service = await spawnService({
      DATABASE_URL: secretDb.url,
      DATABASE_SCHEMA: db.schema,
      KAFKA_BROKERS: inject('kafkaBrokers').join(','),
      TOPIC_PREFIX: prefix,
    });
    const base = `http://127.0.0.1:${service.port}`;

    // Loopback by default: exposing it takes HOST, on purpose.
    expect(listenersOn(service.port)).toEqual(['0100007F']);

    // Failure points are armed through PostgreSQL (npm run chaos, or the dashboard with
    // its token), never through a service's HTTP port.
    for (const [method, path] of [
      ['POST', '/chaos/arm'],
      ['POST', '/chaos/worker.kill_mid_publish'],
      ['PUT', '/failure-points/naive.network_drop_after_commit'],
      ['POST', '/failure-points'],
      ['POST', '/control/traffic'],
      ['POST', '/settings/order_mode'],
      ['POST', '/admin/shutdown'],
      ['DELETE', '/orders'],
    ] as const) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mode: 'on' }),
      });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const armed = await db.pool.query("SELECT name FROM failure_points WHERE mode <> 'off'");
    expect(armed.rows).toEqual([]);

    // Work, then lose every PostgreSQL connection (as a restart would) and work again:
    // the error paths log too, and they must not leak either.
    const order = { userId: 1, sku: 'sku-1', quantity: 1 };
    const post = () =>
      fetch(`${base}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(order),
      });
    expect((await post()).status).toBe(201);
    await db.pool.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1',
      [role],
    );
    let status = 0;
    for (let i = 0; i < 100 && status !== 201; i += 1) {
      status = (await post()).status;
      if (status !== 201) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).toBe(201);
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const text = await (await fetch(`${base}${path}`)).text();
      expect(text).not.toContain(secretDb.secret);
      expect(text).not.toContain(encodeURIComponent(secretDb.secret));
    }

    await service.stop();
    const output = service.output();
    expect(output).toMatch(/connection|terminat/i); // the loss was seen and logged
    expect(output).toContain(`${role}:***@`); // the URL is logged, masked
    expect(output).not.toContain(secretDb.secret);
    expect(output).not.toContain(encodeURIComponent(secretDb.secret));
  });
});
