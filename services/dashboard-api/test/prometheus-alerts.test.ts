import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutboxMetrics } from '@outbox/core';
import { OUTBOX_RULES_FILE } from '@outbox/demo';
import { ensurePrometheus, startPrometheus, type RunningPrometheus } from '@outbox/dev-stack';
import { createTestDb, waitFor, type TestDb } from '@outbox/testkit';
import { Registry } from 'prom-client';
import { io as connect, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statsMessageSchema, type AlertRule, type StatsMessage } from '../src/contract.ts';
import { startTestDashboard, type TestDashboard } from './support/dashboard.ts';

/** The seed's alerts in packages/ops/alerts/outbox.rules.yml. */
const SEED_ALERTS = ['OutboxPendingHigh', 'OutboxLagHigh', 'OutboxPublishErrors', 'OutboxTickSlow'];

/**
 * The alert state on the stats stream comes from a real Prometheus (Debian's 2.42):
 * it scrapes outbox_pending from a /metrics served the way a relay serves it (core's
 * OutboxMetrics, read from the test's schema at scrape time), with the repository's
 * rules loaded as they are but `for:` shortened to 3 s so that nobody waits minutes.
 * 1,001 pending rows (no relay runs) cross the seed's threshold of 1,000.
 */
describe('the alert state from Prometheus on the stats stream', () => {
  let db: TestDb;
  let server: Server;
  let prometheus: RunningPrometheus;
  let dash: TestDashboard;
  let socket: Socket;
  let dir: string;
  const messages: StatsMessage[] = [];

  beforeAll(async () => {
    const binaries = ensurePrometheus((line) => process.stderr.write(`[prometheus] ${line}\n`));
    db = await createTestDb({ max: 6 });
    const registry = new Registry();
    new OutboxMetrics(registry, db.pool);
    server = createServer((_req, res) => {
      void registry.metrics().then((text) => {
        res.setHeader('content-type', registry.contentType);
        res.end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };

    dir = mkdtempSync(join(tmpdir(), 'dashboard-prometheus-'));
    const rules = readFileSync(OUTBOX_RULES_FILE, 'utf8').replace(/^(\s+)for: \S+$/gm, '$1for: 3s');
    writeFileSync(join(dir, 'outbox.rules.yml'), rules);
    prometheus = await startPrometheus({
      binaries,
      dir,
      targets: [{ job: 'publisher-worker', address: `127.0.0.1:${port}` }],
      ruleFiles: [join(dir, 'outbox.rules.yml')],
      scrapeInterval: '1s',
    });
    dash = await startTestDashboard(db, {
      PROMETHEUS_URL: prometheus.url,
      PROMETHEUS_INTERVAL_MS: '500',
    });
    socket = connect(dash.url, { transports: ['websocket'] });
    socket.on('stats', (m: StatsMessage) => messages.push(m));
  }, 120_000);

  afterAll(async () => {
    socket?.close();
    await dash?.close();
    await prometheus?.stop();
    server?.close();
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const rule = (m: StatsMessage | undefined, name: string): AlertRule | undefined =>
    m?.prometheus?.alerts.find((a) => a.name === name);
  const until = (what: string, check: (m: StatsMessage) => boolean) =>
    waitFor(() => messages.findLast(check), { timeoutMs: 30_000, what });

  it('lists the loaded rules, inactive while the backlog is under the threshold', async () => {
    const first = await until('Prometheus connected', (m) => m.prometheus?.status === 'connected');
    expect(statsMessageSchema.parse(first)).toBeTruthy();
    expect(first.prometheus?.url).toBe(prometheus.url);
    expect(first.prometheus?.error).toBeNull();
    expect(first.prometheus?.alerts.map((a) => a.name)).toEqual(
      expect.arrayContaining(SEED_ALERTS),
    );
    expect(rule(first, 'OutboxPendingHigh')).toMatchObject({
      state: 'inactive',
      activeAt: null,
      expr: 'max(outbox_pending) > 1000',
      forSeconds: 3,
    });
  });

  it('goes pending, then firing, when 1,001 events wait', async () => {
    const from = messages.length;
    await db.pool.query(
      `INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)
       SELECT 'order', 'backlog-' || i, 'OrderCreated', '{}'::jsonb FROM generate_series(1, 1001) i`,
    );
    const firing = await until(
      'OutboxPendingHigh firing',
      (m) => rule(m, 'OutboxPendingHigh')?.state === 'firing',
    );
    const seen = messages.slice(from).map((m) => rule(m, 'OutboxPendingHigh')?.state);
    // In order: inactive, then pending (for: 3 s), then firing; never back in between.
    expect(seen.indexOf('pending')).toBeGreaterThan(-1);
    expect(seen.lastIndexOf('inactive')).toBeLessThan(seen.indexOf('pending'));
    expect(seen.lastIndexOf('pending')).toBeLessThan(seen.indexOf('firing'));
    const alert = rule(firing, 'OutboxPendingHigh');
    expect(alert?.value).toBe(1001);
    expect(Date.parse(alert?.activeAt ?? '')).toBeLessThanOrEqual(Date.parse(firing.at));
    // The dashboard's own gauge agrees with what Prometheus scraped.
    expect(firing.outbox.pending).toBe(1001);
  });

  it('says unknown, not the last state, while Prometheus is down, and the stream goes on', async () => {
    await prometheus.stop();
    const down = await until(
      'Prometheus unreachable',
      (m) => m.prometheus?.status === 'unreachable',
    );
    expect(down.prometheus?.error).toMatch(/ECONNREFUSED|fetch failed/);
    expect(down.prometheus?.alerts.length).toBeGreaterThan(0);
    expect(down.prometheus?.alerts.every((a) => a.state === 'unknown' && a.activeAt === null)).toBe(
      true,
    );
    // The tick does not wait for Prometheus: ticks keep coming, one after another, and
    // they still carry the database's numbers.
    const at = messages.indexOf(down);
    await waitFor(() => messages.length >= at + 10, { timeoutMs: 30_000, what: '10 more ticks' });
    const after = messages.slice(at);
    for (let i = 1; i < after.length; i += 1)
      expect(after[i]?.tick).toBe((after[i - 1]?.tick ?? 0) + 1);
    expect(after.every((m) => m.outbox.pending === 1001)).toBe(true);
  });
});
