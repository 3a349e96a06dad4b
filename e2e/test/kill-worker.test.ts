import { beforeAll, describe, expect, it } from 'vitest';
import { openDashboard } from './support/browser.ts';
import {
  feedAnomaliesOnly,
  feedTones,
  highlightedRows,
  pendingShown,
  setTraffic,
  tabTo,
  tileSeverity,
  tileValue,
  within,
  workerRestarts,
} from './support/dashboard.ts';
import { trackPages } from './support/spec.ts';
import { resetSystem } from './support/system.ts';

describe('Kill worker mid-publish', () => {
  const track = trackPages();
  beforeAll(resetSystem);

  it('from the keyboard: the worker restarts, the inbox catches the duplicates, nothing is processed twice', async () => {
    const { page, screenshot } = track(await openDashboard());
    await expect.poll(() => page.getByTestId('connection').innerText(), within).toContain('live');
    await setTraffic(page, '20/s');
    await expect.poll(() => page.getByTestId('feed-line').count(), within).toBeGreaterThan(0);
    const restartsBefore = await workerRestarts(page);

    // Keyboard only, from a fresh load (the preset click above holds the focus): the
    // skip link, then Tab to the button, then Enter.
    await page.reload();
    await expect.poll(() => page.getByTestId('connection').innerText(), within).toContain('live');
    await tabTo(page, 'Skip to the failure buttons', 3);
    await page.keyboard.press('Enter');
    await tabTo(page, 'Kill worker mid-publish', 10);
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.getByTestId('failure-worker.kill_mid_publish-status').innerText(), within)
      .toMatch(/armed|fired/);

    await expect.poll(() => workerRestarts(page), within).toBeGreaterThan(restartsBefore);
    await expect.poll(() => tileValue(page, 'duplicatesCaught'), within).toBeGreaterThan(0);
    expect(await tileSeverity(page, 'duplicatesCaught')).toBe('caught');
    await feedAnomaliesOnly(page);
    await expect.poll(() => feedTones(page), within).toContain('caught');
    await expect.poll(() => highlightedRows(page), within).toContain('duplicate');
    await expect(page.getByTestId('lesson').innerText()).resolves.toContain(
      'Worker dies after publish',
    );

    // The top of the page under traffic, as docs/dashboard.png shows it.
    await screenshot('kill-worker-mid-publish-top', { height: 1900 });

    await setTraffic(page, 'Stop');
    await expect.poll(() => pendingShown(page), within).toBe(0);
    expect(await tileValue(page, 'doubleProcessed')).toBe(0);
    expect(await tileSeverity(page, 'doubleProcessed')).toBe('ok');
    await screenshot('kill-worker-mid-publish');
  });
});
