import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';

/** Debian's Chromium; `npx playwright install` cannot download a browser on these machines. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Without the background-networking flags Chromium's own connections (updates, sync,
 * field trials) are refused here and it logs errors; the specs need none of them.
 */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export const SCREENSHOT_DIR = fileURLToPath(new URL('../../screenshots/', import.meta.url));

export interface Dashboard {
  page: Page;
  /** console.error lines and uncaught page errors seen so far. */
  errors: string[];
  /** Saves screenshots/<name>.png: the whole page, or its top `height` pixels. */
  screenshot(name: string, options?: { height?: number }): Promise<string>;
  close(): Promise<void>;
}

/**
 * Opens the dashboard in a fresh Chromium profile (its own --user-data-dir) at the given
 * viewport, collecting console errors and page errors for the spec to fail on.
 */
export async function openDashboard(
  viewport: { width: number; height: number } = { width: 1280, height: 900 },
): Promise<Dashboard> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'outbox-e2e-profile-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport,
      deviceScaleFactor: 1,
      isMobile: viewport.width < 600,
      hasTouch: viewport.width < 600,
    });
  } catch (error) {
    await rm(userDataDir, { recursive: true, force: true });
    throw error;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`page: ${error.message}`));
  await page.goto(inject('dashboardUrl'), { waitUntil: 'load' });
  return {
    page,
    errors,
    async screenshot(name, options) {
      await mkdir(SCREENSHOT_DIR, { recursive: true });
      const path = join(SCREENSHOT_DIR, `${name}.png`);
      const width = page.viewportSize()?.width ?? 1280;
      await page.screenshot({
        path,
        fullPage: true,
        ...(options?.height ? { clip: { x: 0, y: 0, width, height: options.height } } : {}),
      });
      return path;
    },
    async close() {
      await context.close().catch(() => undefined);
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
