import type { FailurePointName } from '@outbox/dashboard-api/contract';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/** What the page shows, read the way a person reads it: the visible text. */
export async function tileValue(page: Page, key: string): Promise<number> {
  const text = await page.getByTestId(`invariant-${key}-value`).innerText();
  return Number(text.replace(/[^\d]/g, ''));
}

export async function tileSeverity(page: Page, key: string): Promise<string | null> {
  return page.getByTestId(`invariant-${key}`).getAttribute('data-severity');
}

export async function restarts(page: Page, processName: string): Promise<number> {
  const text = await page.getByTestId(`process-${processName}-restarts`).innerText();
  return Number(text);
}

/** Total restarts of the two publisher-worker replicas. */
export async function workerRestarts(page: Page): Promise<number> {
  return (
    (await restarts(page, 'publisher-worker-1')) + (await restarts(page, 'publisher-worker-2'))
  );
}

export async function chartValue(page: Page, chart: 'pending' | 'lag' | 'rates'): Promise<string> {
  return page.getByTestId(`chart-${chart}-value`).innerText();
}

export const pendingShown = async (page: Page) =>
  Number((await chartValue(page, 'pending')).replace(/[^\d]/g, ''));

export const ordersShown = async (page: Page) => {
  const text = await page.getByTestId('connection').innerText();
  const m = /([\d,]+) orders/.exec(text);
  return m ? Number(m[1]?.replace(/,/g, '')) : 0;
};

export const failureButton = (page: Page, name: FailurePointName) =>
  page.getByTestId(`failure-${name}`).getByRole('button');

/** The scenario row the page highlights now, if any. */
export async function highlightedRows(page: Page): Promise<string[]> {
  return page
    .locator('[data-testid^="scenario-"][data-highlighted]')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-testid')?.slice(9) ?? ''));
}

export async function setTraffic(page: Page, preset: 'Stop' | '5/s' | '20/s' | '50/s') {
  const group = page.getByRole('group', { name: 'Traffic presets' });
  await group.getByRole('button', { name: preset, exact: true }).click();
  const rate = preset === 'Stop' ? 0 : Number(preset.replace('/s', ''));
  await expect.poll(() => page.getByTestId('traffic-rate').innerText()).toBe(`${rate} orders/s`);
}

export async function setMode(page: Page, mode: 'Naive dual-write' | 'Outbox') {
  await page.getByLabel(mode, { exact: true }).check();
  await expect.poll(() => page.getByLabel(mode, { exact: true }).isChecked()).toBe(true);
}

/** Polls a reading of the page with a deadline generous enough for two loaded cores. */
export const within = { timeout: 90_000, interval: 500 };

/** Presses Tab until the focused element is the button with this label (keyboard use). */
export async function tabTo(page: Page, label: string, maxPresses = 40): Promise<void> {
  for (let i = 0; i < maxPresses; i += 1) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
    if (focused.startsWith(label)) return;
  }
  throw new Error(`"${label}" not reached with ${maxPresses} Tab presses`);
}

/** Shows only duplicates and anomalies in the feed, so a rare line is not scrolled away. */
export async function feedAnomaliesOnly(page: Page): Promise<void> {
  await page.getByLabel('Only duplicates and anomalies').check();
}

export const feedTones = (page: Page) =>
  page
    .getByTestId('feed-line')
    .evaluateAll((lines) => lines.map((l) => l.getAttribute('data-tone') ?? ''));

/** Polls a condition until it holds (true) or the time is up (false): for a retry loop. */
export async function waitUntil(condition: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return condition();
}
