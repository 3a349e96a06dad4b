import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { pgConfig } from '@outbox/core';
import { type AuditReport } from '@outbox/lab';
import { startStack } from '@outbox/dev-stack';

const demoDir = fileURLToPath(new URL('..', import.meta.url));

/** The README's first command, as a user runs it (in its own schema and ports). */
describe('npm run demo', () => {
  it('brings the backend up, runs traffic, prints the URLs and the audit, and stops every process', async () => {
    const schema = `demo_smoke_${randomBytes(3).toString('hex')}`;
    const port = 24_000 + Math.floor(Math.random() * 500) * 10;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', '--rate', '10', '--seconds', '25'],
      {
        cwd: demoDir,
        env: {
          ...process.env,
          DATABASE_SCHEMA: schema,
          TOPIC_PREFIX: `${schema}.`,
          DEMO_PORT: String(port),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, out).toBe(0);

    expect(out).toContain(`order-api   http://127.0.0.1:${port + 1}`);
    expect(out).toContain('npm run chaos -- list');
    const auditLine = out.split('\n').find((l) => l.startsWith('[demo] audit: '));
    expect(auditLine, out).toBeDefined();
    const report = JSON.parse(auditLine!.slice('[demo] audit: '.length)) as AuditReport;
    expect(report.orders).toBeGreaterThan(20);
    expect(report.ordersWithoutEvents).toBe(0);
    expect(report.phantomEvents).toBe(0);
    expect(report.doubleProcessed).toBe(0);

    // The supervisor's view reached demo_processes, and every process it ran is gone.
    const stack = await startStack({ log: () => undefined });
    const pool = new pg.Pool(
      pgConfig({ DATABASE_URL: stack.databaseUrl, DATABASE_SCHEMA: schema }),
    );
    try {
      const { rows } = await pool.query<{ name: string; state: string; pid: number | null }>(
        'SELECT name, state, pid FROM demo_processes ORDER BY name',
      );
      expect(rows.map((r) => r.name)).toEqual(
        expect.arrayContaining([
          'inventory-consumer',
          'order-api',
          'publisher-worker-1',
          'publisher-worker-2',
        ]),
      );
      expect(rows.every((r) => r.state === 'down' && r.pid === null)).toBe(true);
    } finally {
      await pool.end();
    }
    const { rows: listening } = {
      rows: await portsInUse([port + 1, port + 2, port + 3, port + 4]),
    };
    expect(listening).toEqual([]);
  });
});

/** Ports among `ports` that still accept a connection (a process left behind). */
async function portsInUse(ports: number[]): Promise<number[]> {
  const { connect } = await import('node:net');
  const open = await Promise.all(
    ports.map(
      (p) =>
        new Promise<boolean>((resolve) => {
          const socket = connect(p, '127.0.0.1');
          socket.once('connect', () => (socket.destroy(), resolve(true)));
          socket.once('error', () => resolve(false));
        }),
    ),
  );
  return ports.filter((_, i) => open[i]);
}
