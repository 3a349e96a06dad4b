import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local OTLP/HTTP endpoint that takes exports and drops them: the bench's collector. */
export interface OtlpSink {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** Export requests and bytes received so far. */
  received(): { requests: number; bytes: number };
  close(): Promise<void>;
}

/**
 * Answers every export 200 after reading its body, and keeps nothing: the cost measured is
 * the traced service's (spans, instrumentations, serialising and sending the exports), not
 * a collector's. It runs in the bench process, so its CPU counts under autocannon's.
 */
export async function startOtlpSink(): Promise<OtlpSink> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      requests += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => ({ requests, bytes }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
