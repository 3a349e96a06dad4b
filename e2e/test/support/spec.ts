import { afterEach, expect } from 'vitest';
import type { Dashboard } from './browser.ts';

/**
 * Tracks the pages a spec opens: after each test they are closed, and the test fails on
 * any console error or uncaught page error they saw.
 */
export function trackPages(): (d: Dashboard) => Dashboard {
  const open: Dashboard[] = [];
  afterEach(async () => {
    const pages = open.splice(0);
    const errors = pages.flatMap((d) => d.errors);
    await Promise.all(pages.map((d) => d.close()));
    expect(errors, 'console errors on the page').toEqual([]);
  });
  return (d) => {
    open.push(d);
    return d;
  };
}
