import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { pgConfig } from '@outbox/core';
import { type AuditReport } from '@outbox/lab';
import { ensurePrometheus, startStack } from '@outbox/dev-stack';
import { freeSystemPorts, waitFor } from '@outbox/testkit';
import { OUTBOX_RULES_FILE } from '../src/index.ts';

const demoDir = fileURLToPath(new URL('..', import.meta.url));
const root = fileURLToPath(new URL('../../..', import.meta.url));
const PROCESSES = [
  'dashboard-api',
  'inventory-consumer',
  'order-api',
  'publisher-worker-1',
  'publisher-worker-2',
];

/** The README's first command, as a user runs it (in its own schema and ports). */
describe('npm run demo', () => {
  it('brings the backend up with Prometheus scraping it, runs traffic, prints the URLs and the audit, and stops every process', async () => {
    // The demo installs Prometheus itself when it may; CI's test run must have it.
    ensurePrometheus((line) => process.stderr.write(`[prometheus] ${line}\n`));
    const schema = `demo_smoke_${randomBytes(3).toString('hex')}`;
    const port = (await freeSystemPorts()).dashboard;
    const { PROMETHEUS_URL: _existing, ...env } = process.env;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', '--rate', '10', '--seconds', '40'],
      {
        cwd: demoDir,
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
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));

    // While it runs (the URLs are printed once every service answers): its Prometheus.
    // The checks took 12 s here; --seconds 40 leaves them room on a loaded machine.
    const prometheusUrl = await waitFor(
      () => /\[demo\] prometheus {2}(http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1],
      { timeoutMs: 180_000, what: `the demo's prometheus line in:\n${out}` },
    );
    await checkPrometheus(prometheusUrl, schema, `http://127.0.0.1:${port}`);

    const code = await exited;
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
    const prometheusPort = Number(new URL(prometheusUrl).port);
    const { rows: listening } = {
      rows: await portsInUse([port + 1, port + 2, port + 3, port + 4, prometheusPort]),
    };
    expect(listening).toEqual([]);
    rmSync(`${root}/.data/prometheus/${schema}`, { recursive: true, force: true });
  });
});

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

interface Target {
  labels: Record<string, string>;
  health: 'up' | 'down' | 'unknown';
  scrapeUrl: string;
}

/**
 * The demo's Prometheus scrapes every process of the running system, one target each,
 * all up, with the seed's alert rules loaded from packages/ops as they are; after a
 * publisher-worker replica is killed (SIGKILL) and restarted by the supervisor it
 * scrapes the new process; and dashboard-api reads the alert state from it.
 */
async function checkPrometheus(url: string, schema: string, dashboardUrl: string): Promise<void> {
  const targets = async () =>
    (await getJson<{ data: { activeTargets: Target[] } }>(`${url}/api/v1/targets?state=active`))
      .data.activeTargets;
  const allUp = async () => {
    const t = await targets();
    return t.length === PROCESSES.length && t.every((x) => x.health === 'up') ? t : undefined;
  };
  const up = await waitFor(allUp, { timeoutMs: 60_000, what: 'every target up' });
  expect(up.map((t) => t.labels.process).sort()).toEqual(PROCESSES);
  for (const t of up)
    expect(t.labels.job, t.labels.process).toBe(t.labels.process?.replace(/-\d+$/, ''));

  const { data } = await getJson<{
    data: { groups: { file: string; rules: { name: string; type: string }[] }[] };
  }>(`${url}/api/v1/rules`);
  expect(new Set(data.groups.map((g) => g.file))).toEqual(new Set([OUTBOX_RULES_FILE]));
  expect(data.groups.flatMap((g) => g.rules.map((r) => r.name))).toEqual(
    expect.arrayContaining([
      'OutboxPendingHigh',
      'OutboxLagHigh',
      'OutboxPublishErrors',
      'OutboxTickSlow',
    ]),
  );

  // A replica killed and restarted: Prometheus scrapes the new process (its start time).
  const startTime = async () => {
    const q = encodeURIComponent('process_start_time_seconds{process="publisher-worker-2"}');
    const body = await getJson<{ data: { result: { value: [number, string] }[] } }>(
      `${url}/api/v1/query?query=${q}`,
    );
    return body.data.result[0]?.value[1];
  };
  const before = await waitFor(startTime, { timeoutMs: 30_000, what: 'the replica scraped' });
  const pool = new pg.Pool(
    pgConfig({
      DATABASE_URL: (await startStack({ log: () => undefined })).databaseUrl,
      DATABASE_SCHEMA: schema,
    }),
  );
  try {
    const { rows } = await pool.query<{ pid: number }>(
      `SELECT pid FROM demo_processes WHERE name = 'publisher-worker-2'`,
    );
    process.kill(rows[0]!.pid, 'SIGKILL');
  } finally {
    await pool.end();
  }
  await waitFor(async () => ((await startTime()) !== before ? true : undefined), {
    timeoutMs: 30_000,
    what: 'the restarted replica scraped',
  });
  await waitFor(allUp, { timeoutMs: 30_000, what: 'every target up after the restart' });

  // dashboard-api was given this Prometheus: its stream carries the rules' state.
  const stats = await waitFor(
    async () => {
      const s = await getJson<{
        prometheus?: { url: string; status: string; alerts: { name: string; state: string }[] };
      }>(`${dashboardUrl}/api/stats`);
      return s.prometheus?.status === 'connected' ? s.prometheus : undefined;
    },
    { timeoutMs: 30_000, what: 'dashboard-api connected to Prometheus' },
  );
  expect(stats.url).toBe(url);
  expect(stats.alerts.find((a) => a.name === 'OutboxPendingHigh')?.state).toBe('inactive');
}

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
