import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

/**
 * The worker's whole HTTP surface: GET /healthz (200 while running, 503 once stopping)
 * and GET /metrics (Prometheus text). node:http is enough for two routes.
 */
export function createHttpServer(
  registry: Registry,
  health: () => { ok: boolean; [key: string]: unknown },
): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') {
      const body = health();
      res.writeHead(body.ok ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
      return;
    }
    if (req.method === 'GET' && path === '/metrics') {
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(text);
        },
        (error: unknown) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(String(error));
        },
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'not found' }));
  });
}
