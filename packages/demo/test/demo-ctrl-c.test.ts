import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freeSystemPorts, waitFor } from '@outbox/testkit';
import { startSystem } from '../src/index.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** The ports of `ports` that something still listens on (127.0.0.1). */
async function listening(ports: number[]): Promise<number[]> {
  const taken: number[] = [];
  for (const port of ports) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (!free) taken.push(port);
  }
  return taken;
}

/**
 * Ctrl-C in the terminal that runs `npm run demo`: the terminal sends SIGINT to the
 * whole foreground process group — npm, the pnpm wrapper, pnpm and the demo itself —
 * and the wrappers pass it on to their child as well. The services run in process
 * groups of their own (the supervisor's), so only the demo can stop them: it must,
 * however many of those signals reach it. Here the demo's own command chain (package.json's
 * demo script after its install and build steps) runs in a process group of its own,
 * and the group gets SIGINT, as a terminal's job does.
 */
describe('Ctrl-C on npm run demo', () => {
  it('stops every service, even though the demo receives the signal more than once', async () => {
    const schema = `demo_ctrlc_${randomBytes(3).toString('hex')}`;
    const port = (await freeSystemPorts()).dashboard;
    const ports = [port, port + 1, port + 2, port + 3, port + 4];
    const { PROMETHEUS_URL: _existing, ...env } = process.env;
    const child = spawn(
      process.execPath,
      [
        'scripts/pnpm.mjs',
        '--filter',
        '@outbox/demo',
        'exec',
        'tsx',
        'src/main.ts',
        '--rate',
        '5',
        '--no-prometheus',
      ],
      {
        cwd: root,
        env: {
          ...env,
          DATABASE_SCHEMA: schema,
          TOPIC_PREFIX: `${schema}.`,
          DEMO_PORT: String(port),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await waitFor(() => out.includes('[demo] traffic') || undefined, {
        timeoutMs: 180_000,
        what: `the demo up, in:\n${out}`,
      });
      expect(await listening(ports)).toEqual(ports);

      process.kill(-child.pid!, 'SIGINT');
      await exited;
      // Every service's port is released once the demo has gone: none was left behind.
      const left = await waitFor(
        async () => ((await listening(ports)).length === 0 ? true : undefined),
        { timeoutMs: 30_000, what: 'the services gone' },
      ).catch(async () => listening(ports));
      expect(left, out).toBe(true);
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
});

/**
 * The wrappers of `npm run demo` do not wait for the demo: when Ctrl-C ends them, npx and
 * pnpm kill their child, SIGTERM and then SIGKILL a few seconds later (a demo at 100
 * orders/s took longer than that to stop: its five services were left running). No
 * handler survives SIGKILL, so the services watch their supervisor themselves: its IPC
 * channel closes when it dies, however it dies, and each stops gracefully.
 */
describe('a demo killed outright (SIGKILL)', () => {
  it('takes its services with it', async () => {
    const schema = `demo_kill_${randomBytes(3).toString('hex')}`;
    const port = (await freeSystemPorts()).dashboard;
    const ports = [port, port + 1, port + 2, port + 3, port + 4];
    const { PROMETHEUS_URL: _existing, ...env } = process.env;
    const demo = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', '--rate', '5', '--no-prometheus'],
      {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        env: {
          ...env,
          DATABASE_SCHEMA: schema,
          TOPIC_PREFIX: `${schema}.`,
          DEMO_PORT: String(port),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    demo.stdout.on('data', (d: Buffer) => (out += d.toString()));
    demo.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((resolve) => demo.on('exit', resolve));
    try {
      await waitFor(() => out.includes('[demo] traffic') || undefined, {
        timeoutMs: 180_000,
        what: `the demo up, in:\n${out}`,
      });
      expect(await listening(ports)).toEqual(ports);
      demo.kill('SIGKILL');
      await exited;
      const gone = await waitFor(
        async () => ((await listening(ports)).length === 0 ? true : undefined),
        { timeoutMs: 30_000, what: 'the services gone' },
      ).catch(async () => listening(ports));
      expect(gone, out).toBe(true);
    } finally {
      demo.kill('SIGKILL');
    }
  });
});

describe('a demo whose ports are taken', () => {
  it('refuses to start, naming the port and what should have run there', async () => {
    const base = (await freeSystemPorts()).dashboard;
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(base + 1, '127.0.0.1', resolve));
    try {
      const started = startSystem({
        schema: `demo_ports_${randomBytes(3).toString('hex')}`,
        ports: {
          dashboard: base,
          orderApi: base + 1,
          worker1: base + 2,
          worker2: base + 3,
          consumer: base + 4,
        },
        log: () => undefined,
      });
      await expect(started).rejects.toThrow(`port ${base + 1} (order-api) is in use on 127.0.0.1`);
      // Nothing was started on the free ports either.
      expect(await listening([base, base + 2, base + 3, base + 4])).toEqual([]);
    } finally {
      squatter.close();
    }
  });
});
