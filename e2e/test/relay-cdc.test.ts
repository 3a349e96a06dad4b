import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { openDashboard, SCREENSHOT_DIR } from './support/browser.ts';
import { pendingShown, setTraffic, tileSeverity, tileValue, within } from './support/dashboard.ts';
import { trackPages } from './support/spec.ts';
import { auditNow, resetSystem } from './support/system.ts';

const slow = { timeout: 240_000, interval: 500 };

describe('Relay: polling worker | Debezium CDC', () => {
  const track = trackPages();
  beforeAll(resetSystem);

  it('switches to Debezium on the dashboard, kills Kafka Connect mid-stream, switches back: nothing lost, duplicates caught', async () => {
    const { page, screenshot } = track(await openDashboard());
    await expect.poll(() => page.getByTestId('connection').innerText(), within).toContain('live');
    await setTraffic(page, '20/s');
    await expect.poll(() => page.getByTestId('feed-line').count(), within).toBeGreaterThan(0);

    const relay = page.getByTestId('relay-switch');
    await relay.getByText('Debezium CDC').click();
    await expect
      .poll(() => page.getByTestId('relay-status').innerText(), slow)
      .toContain('Kafka Connect reads');
    await expect
      .poll(() => page.getByTestId('cdc-task').getAttribute('data-state'), slow)
      .toBe('RUNNING');
    await screenshot('relay-cdc-running', { height: 1900 });
    await expect
      .poll(() => page.getByTestId('cdc-comparison').innerText())
      .toContain('NOTIFY at COMMIT');
    await page.locator('#cdc').screenshot({ path: join(SCREENSHOT_DIR, 'relay-cdc-panel.png') });

    await page.getByRole('button', { name: 'Kill Kafka Connect mid-stream' }).click();
    await expect
      .poll(() => page.getByTestId('failure-connect.kill_mid_stream-status').innerText(), within)
      .toMatch(/fired/);
    // Killed, then started again by the demo on its slot and saved offsets.
    await expect
      .poll(() => page.getByTestId('cdc-task').getAttribute('data-state'), slow)
      .toBe('RUNNING');

    await relay.getByText('Polling worker').click();
    await expect
      .poll(() => page.getByTestId('relay-status').innerText(), slow)
      .toContain('publisher-worker claims');
    await expect.poll(() => page.getByTestId('cdc-panel').count(), within).toBe(0);

    await setTraffic(page, 'Stop');
    await expect.poll(() => pendingShown(page), slow).toBe(0);
    const report = await auditNow();
    expect(report.ordersWithoutEvents).toBe(0);
    expect(report.duplicatesCaught).toBe(report.duplicatesDelivered);
    expect(report.doubleProcessed).toBe(0);
    expect(report.fifoViolations).toBe(0);
    expect(await tileValue(page, 'doubleProcessed')).toBe(0);
    expect(await tileSeverity(page, 'doubleProcessed')).toBe('ok');
    await screenshot('relay-back-to-polling');
  });
});
