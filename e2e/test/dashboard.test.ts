import { beforeAll, describe, expect, inject, it } from 'vitest';
import { openDashboard, SCREENSHOT_DIR } from './support/browser.ts';
import {
  chartValue,
  failureButton,
  highlightedRows,
  ordersShown,
  pendingShown,
  setTraffic,
  tileValue,
  within,
} from './support/dashboard.ts';
import { trackPages } from './support/spec.ts';
import { resetSystem, systemPool } from './support/system.ts';

const publishedPerSecond = async (page: Parameters<typeof chartValue>[0]) =>
  Number(/^([\d.]+)/.exec(await chartValue(page, 'rates'))?.[1] ?? 0);

describe('the dashboard', () => {
  const track = trackPages();
  beforeAll(resetSystem);

  it('loads, and its live numbers move when traffic runs', async () => {
    const { page, screenshot } = track(await openDashboard());
    await expect.poll(() => page.getByTestId('connection').innerText(), within).toContain('live');
    await expect(page.title()).resolves.toBe('Outbox Lab');
    const before = await ordersShown(page);

    await setTraffic(page, '20/s');
    await expect.poll(() => ordersShown(page), within).toBeGreaterThan(before + 20);
    await expect.poll(() => publishedPerSecond(page), within).toBeGreaterThan(0);
    await expect.poll(() => page.getByTestId('feed-line').count(), within).toBeGreaterThan(5);
    await expect.poll(() => highlightedRows(page), within).toContain('happy_path');
    // The rate chart draws a line once it has two samples.
    await expect
      .poll(() => page.locator('[data-testid="chart-rates"] .recharts-line-curve').count(), within)
      .toBeGreaterThan(0);
    await screenshot('dashboard-live');

    await setTraffic(page, 'Stop');
    await expect.poll(() => pendingShown(page), within).toBe(0);
    // Outbox mode, nothing broken: every invariant holds.
    for (const key of [
      'neverPublished',
      'publishedNotConsumed',
      'phantomEvents',
      'doubleProcessed',
      'fifoViolations',
    ])
      expect(await tileValue(page, key), key).toBe(0);
    // The consumer group read from Kafka: caught up once the traffic stopped.
    await expect
      .poll(() => page.getByTestId('consumer-state').getAttribute('data-state'), within)
      .toBe('caught_up');
  });

  it('fits a phone-width screen and keeps every failure button reachable', async () => {
    const { page, screenshot } = track(await openDashboard({ width: 390, height: 844 }));
    await expect.poll(() => page.getByTestId('connection').innerText(), within).toContain('live');
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width, 'page wider than the phone').toBeLessThanOrEqual(390);
    const kill = failureButton(page, 'worker.kill_mid_publish');
    await kill.scrollIntoViewIfNeeded();
    const box = await kill.boundingBox();
    expect(box).not.toBeNull();
    expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(390);
    expect(box?.height ?? 0).toBeGreaterThanOrEqual(32);
    await screenshot('dashboard-phone');
  });

  it("shows each threshold's alert state from Prometheus, and links to the metric's graph", async () => {
    const { page } = track(await openDashboard());
    await expect.poll(() => page.getByTestId('connection').innerText(), within).toContain('live');
    const state = (chart: 'pending' | 'lag') =>
      page.getByTestId(`chart-${chart}-alert-state`).getAttribute('data-state');
    // Nothing waits: Prometheus (the system's, scraping every process) says inactive.
    await expect.poll(() => state('pending'), within).toBe('inactive');
    await expect.poll(() => state('lag'), within).toBe('inactive');
    const prometheus = inject('prometheusUrl');
    for (const [chart, metric] of [
      ['pending', 'outbox_pending'],
      ['lag', 'outbox_lag_seconds'],
    ] as const)
      await expect(page.getByTestId(`chart-${chart}-graph`).getAttribute('href')).resolves.toBe(
        `${prometheus}/graph?g0.expr=${metric}&g0.tab=0&g0.range_input=5m`,
      );

    await page
      .locator('.charts')
      .screenshot({ path: `${SCREENSHOT_DIR}dashboard-alerts-inactive.png` });

    // 1,001 events that cannot leave yet (their retry is an hour away), created two
    // minutes ago: over both of the seed's thresholds, pending > 1000 and lag > 60 s.
    // The rules' `for:` is 2 s in this system, so both fire within seconds.
    const pool = systemPool();
    try {
      await pool.query(
        `INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, created_at, next_attempt_at)
         SELECT 'order', 'e2e-alert-' || i, 'OrderCreated', '{}'::jsonb,
                now() - interval '2 minutes', now() + interval '1 hour'
           FROM generate_series(1, 1001) i`,
      );
    } finally {
      await pool.end();
    }
    await expect.poll(() => state('pending'), within).toBe('firing');
    await expect.poll(() => state('lag'), within).toBe('firing');
    await expect(page.getByTestId('chart-pending-alert-state').innerText()).resolves.toBe('firing');
    await expect(
      page.getByTestId('chart-pending-alert-state').getAttribute('title'),
    ).resolves.toMatch(/OutboxPendingHigh firing since .*max\(outbox_pending\) > 1000/);
    await page.locator('.charts').screenshot({ path: `${SCREENSHOT_DIR}dashboard-alerts.png` });

    // The link opens Prometheus' graph of the metric in a new tab.
    const [graph] = await Promise.all([
      page.context().waitForEvent('page'),
      page.getByTestId('chart-pending-graph').click(),
    ]);
    await graph.waitForLoadState('load');
    // Debian's 2.42 has the classic UI only and redirects /graph to /classic/graph,
    // the query kept.
    const landed = new URL(graph.url());
    expect(landed.origin).toBe(prometheus);
    expect(landed.pathname).toMatch(/\/graph$/);
    expect(landed.searchParams.get('g0.expr')).toBe('outbox_pending');
    await expect(graph.title()).resolves.toContain('Prometheus');
    await graph.screenshot({ path: `${SCREENSHOT_DIR}prometheus-graph.png` });
    await graph.close();
  });
});
