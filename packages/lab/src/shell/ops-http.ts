import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '@outbox/core';

/** What GET /healthz answers: 200 while `ok`, 503 otherwise; the rest is informative. */
export type HealthBody = { ok: boolean; [key: string]: unknown };

/**
 * A process's whole operations surface: GET /healthz (200 while running, 503 once
 * stopping) and GET /metrics (Prometheus text from `registry`). node:http is enough
 * for two routes.
 */
export function createOpsServer(registry: Registry, health: () => HealthBody): Server {
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

/**
 * Listens on `host:port` (PORT=0 lets the OS choose) and calls `onListening` with the
 * bound port. A server error (the port taken, say) is fatal: the process exits 1,
 * since a service that cannot be reached must not pretend to run.
 */
export function listenOrExit(
  server: Server,
  { host, port }: { host: string; port: number },
  log: Logger,
  onListening: (port: number) => void,
): void {
  server.on('error', (error) => {
    log.fatal({ err: error }, 'HTTP server error');
    process.exit(1);
  });
  server.listen(port, host, () => onListening((server.address() as AddressInfo).port));
}

/**
 * Closes the server once its open connections are gone. `idle` only cuts the idle
 * keep-alive ones (in-flight requests finish); `all` cuts every connection.
 */
export function closeServer(server: Server, cut: 'idle' | 'all'): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    if (cut === 'idle') server.closeIdleConnections();
    else server.closeAllConnections();
  });
}
