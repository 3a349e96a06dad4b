import { beforeAll, describe, expect, it } from 'vitest';
import { openDashboard } from './support/browser.ts';
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
import { resetSystem } from './support/system.ts';

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
});
