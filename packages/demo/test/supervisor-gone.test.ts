import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startStack, type StackEndpoints } from '@outbox/dev-stack';
import { freeSystemPorts } from '@outbox/testkit';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * A service started by the demo's supervisor watches the supervisor's IPC channel and
 * stops when it closes, however the supervisor died. That watch must hold from the
 * first line of the service on, not only once it is up: the dashboard answers /healthz
 * while it still derives its counters, so the demo reports it up and a demo killed
 * right then (a CI run did exactly that) left a dashboard that never stopped and kept
 * its port. Each service here has its channel closed, as a dead supervisor's would be,
 * at some point of its start-up, and it must exit.
 */
const services = fileURLToPath(new URL('../../../services/', import.meta.url));

interface Started {
  /** Closes the IPC channel as a dead supervisor's would; ms until the exit, or 'still running'. */
  disconnectAfter(ms: number): Promise<number | 'still running'>;
  out(): string;
}

function startService(dir: string, env: Record<string, string>): Started {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: `${services}${dir}`,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    out: () => out,
    async disconnectAfter(ms) {
      await new Promise((resolve) => setTimeout(resolve, ms));
      if (child.exitCode !== null) throw new Error(`exited before the test:\n${out}`);
      const at = Date.now();
      child.disconnect();
      const gone = await Promise.race([
        exited.then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), 60_000)),
      ]);
      child.kill('SIGKILL');
      return gone ? Date.now() - at : 'still running';
    },
  };
}

const schema = 'supervisor_gone';
let stack: StackEndpoints;
beforeAll(async () => {
  stack = await startStack({});
  const admin = new pg.Client({ connectionString: stack.databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  await admin.end();
});

function env(port: number): Record<string, string> {
  return {
    DATABASE_URL: stack.databaseUrl,
    DATABASE_SCHEMA: schema,
    KAFKA_BROKERS: stack.kafkaBrokers.join(','),
    TOPIC_PREFIX: `${schema}.`,
    PORT: String(port),
    REPLICA_ID: `${schema}-worker`,
  };
}

describe('a service whose supervisor dies during its start-up exits instead of running on', () => {
  // Gone before the service's first line runs (the channel closed while tsx loads it),
  // and gone while it connects: either way it must not come up as an orphan.
  for (const [dir, delayMs] of [
    ['order-api', 200],
    ['order-api', 1_500],
    ['publisher-worker', 200],
    ['inventory-consumer', 200],
    ['dashboard-api', 200],
    ['dashboard-api', 1_500],
  ] as const) {
    it(`${dir}, ${delayMs} ms after its spawn`, async () => {
      const service = startService(dir, env((await freeSystemPorts()).dashboard));
      // Exits, however long its modules take to load: in a fresh clone (tsx's cache
      // cold) on a loaded machine that took up to ~15 s before its first line ran.
      const ms = await service.disconnectAfter(delayMs);
      expect(typeof ms === 'number', `${ms}\n${service.out()}`).toBe(true);
    });
  }

  it('dashboard-api, while it retries an unreachable PostgreSQL', async () => {
    const port = (await freeSystemPorts()).dashboard;
    const service = startService('dashboard-api', {
      ...env(port),
      // Nothing listens on port 1: refused at once, and the dashboard retries.
      DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:1/outbox_lab',
    });
    // Before its retries run out (10 attempts, ~28 s, then it would exit anyway).
    const ms = await service.disconnectAfter(3_000);
    expect(typeof ms === 'number' && ms < 25_000, `${ms}\n${service.out()}`).toBe(true);
  });
});
