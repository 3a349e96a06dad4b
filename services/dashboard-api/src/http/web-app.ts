import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { type RequestHandler } from 'express';

/**
 * Serves the built web app (vite's `web/dist`) so that one URL is the whole demo:
 * files as they are, and index.html for any other GET that wants HTML (client-side
 * routes). Checked per request, so a web build made after the server started shows up.
 * Without a build, `/` answers 503 and says how to make one.
 */
export function webApp(dist: string): RequestHandler[] {
  const index = join(dist, 'index.html');
  const files = express.static(dist, {
    index: false,
    // vite puts content-hashed names under assets/: those never change.
    setHeaders: (res, path) =>
      res.setHeader(
        'Cache-Control',
        /[\\/]assets[\\/]/.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache',
      ),
  });
  const staticFiles: RequestHandler = (req, res, next) => {
    if (req.path === '/' || req.path === '/index.html') {
      next();
      return;
    }
    files(req, res, next);
  };
  const fallback: RequestHandler = (req, res, next) => {
    // A missing file (/assets/old-hash.js) is a 404, not the page: only routes fall back.
    const isFile = /\.[a-z0-9]+$/i.test(req.path);
    if ((req.method !== 'GET' && req.method !== 'HEAD') || req.path.startsWith('/api/') || isFile) {
      next();
      return;
    }
    if (existsSync(index)) {
      // index.html names hashed assets: never cache it, or a new build is not seen.
      res.set('Cache-Control', 'no-cache');
      res.sendFile(index);
      return;
    }
    if (req.path === '/') {
      res.status(503).json({
        service: 'dashboard-api',
        web: `no web build at ${dist}: run \`node scripts/pnpm.mjs --filter @outbox/web build\`, or use vite's dev server`,
        api: ['/api/state', '/api/stats', '/api/outbox', '/api/audit', '/healthz', '/metrics'],
      });
      return;
    }
    next();
  };
  return [staticFiles, fallback];
}
