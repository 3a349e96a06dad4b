import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDashboard, type TestDashboard } from './support/dashboard.ts';
import { createTestDb, type TestDb } from '@outbox/testkit';

describe('serving the built web app (one URL for the demo)', () => {
  let db: TestDb;
  let dash: TestDashboard;
  let dist: string;

  beforeAll(async () => {
    dist = mkdtempSync(join(tmpdir(), 'web-dist-'));
    mkdirSync(join(dist, 'assets'));
    writeFileSync(join(dist, 'index.html'), '<!doctype html><div id="root"></div>');
    writeFileSync(join(dist, 'assets', 'index-abc123.js'), 'console.log(1)');
    writeFileSync(join(dist, 'favicon.svg'), '<svg/>');
    db = await createTestDb({ stock: 1000, max: 6 });
    dash = await startTestDashboard(db, { WEB_DIST: dist });
  });
  afterAll(async () => {
    await dash?.close();
    await db?.close();
    rmSync(dist, { recursive: true, force: true });
  });

  it('serves index.html at / and for client routes, never cached', async () => {
    for (const path of ['/', '/orders/123', '/outbox']) {
      const res = await fetch(`${dash.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(await res.text()).toContain('id="root"');
    }
  });

  it('serves hashed assets as immutable, other files uncached, missing files as 404', async () => {
    const asset = await fetch(`${dash.url}/assets/index-abc123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    const icon = await fetch(`${dash.url}/favicon.svg`);
    expect(icon.headers.get('cache-control')).toBe('no-cache');
    expect((await fetch(`${dash.url}/assets/index-old.js`)).status).toBe(404);
    // The API is not shadowed by the fallback.
    const api = await fetch(`${dash.url}/api/unknown`);
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toMatch(/json/);
    expect((await fetch(`${dash.url}/api/state`)).status).toBe(200);
  });
});
