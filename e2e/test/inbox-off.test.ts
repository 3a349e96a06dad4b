import { beforeAll, describe, expect, it } from 'vitest';
import { openDashboard } from './support/browser.ts';
import {
  failureButton,
  feedAnomaliesOnly,
  feedTones,
  highlightedRows,
  setTraffic,
  tileSeverity,
  tileValue,
  waitUntil,
  within,
  workerRestarts,
} from './support/dashboard.ts';
import { trackPages } from './support/spec.ts';
import { resetSystem } from './support/system.ts';

describe('Disable inbox', () => {
  const track = trackPages();
  beforeAll(resetSystem);

  it('+ Kill worker mid-publish: double-processed rises above 0, in red', async () => {
    const { page, screenshot } = track(await openDashboard());
    await expect.poll(() => page.getByTestId('connection').innerText(), within).toContain('live');
    const inbox = failureButton(page, 'consumer.inbox_off');
    await inbox.click();
    await expect.poll(() => inbox.getAttribute('aria-pressed'), within).toBe('true');
    await setTraffic(page, '20/s');
    await expect.poll(() => page.getByTestId('feed-line').count(), within).toBeGreaterThan(0);

    // Double-processed counts orders whose stock was reserved twice: only a redelivered
    // OrderCreated reserves. A killed batch may hold only OrderPaid/OrderCancelled
    // events, so, as a learner would, kill again until one does (each kill is real).
    for (let kill = 1; ; kill += 1) {
      const restartsBefore = await workerRestarts(page);
      await failureButton(page, 'worker.kill_mid_publish').click();
      await expect.poll(() => workerRestarts(page), within).toBeGreaterThan(restartsBefore);
      const seen = await waitUntil(
        async () => (await tileValue(page, 'doubleProcessed')) > 0,
        20_000,
      );
      if (seen) break;
      expect(kill, 'kills without a redelivered OrderCreated').toBeLessThan(6);
    }
    expect(await tileSeverity(page, 'doubleProcessed')).toBe('broken');
    const color = await page
      .getByTestId('invariant-doubleProcessed-value')
      .evaluate((el) => getComputedStyle(el).color);
    expect(color).toBe('rgb(220, 38, 38)');
    await feedAnomaliesOnly(page);
    await expect.poll(() => feedTones(page), within).toContain('reprocessed');
    await expect.poll(() => highlightedRows(page), within).toContain('double_processed');
    await screenshot('inbox-off-double-processed');

    await setTraffic(page, 'Stop');
    await inbox.click();
    await expect.poll(() => inbox.getAttribute('aria-pressed'), within).toBe('false');
  });
});
