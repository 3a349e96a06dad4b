import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportTraceRequestSchema, spansOf, type SpanKind, type SpanRecord } from '@outbox/lab';
import { waitFor } from './wait.ts';

/** One span as received, flattened by the lab's parser (the dashboard's receiver's too). */
export type ReceivedSpan = SpanRecord;
export type ReceivedSpanKind = SpanKind;

/** A local OTLP/HTTP JSON receiver: what a collector would get from the services. */
export interface OtlpReceiver {
  /** http://127.0.0.1:port, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Every request, by path (/v1/traces, /v1/logs, …), received so far. */
  requests: string[];
  /** Waits until `find(spans)` returns something (default 60 s). */
  waitFor<T>(
    find: (spans: ReceivedSpan[]) => T | undefined,
    what: string,
    timeoutMs?: number,
  ): Promise<T>;
  close(): Promise<void>;
}

/** The spans of one ExportTraceServiceRequest in OTLP/JSON; throws on a malformed one. */
export function spansOfExport(body: unknown): ReceivedSpan[] {
  return spansOf(exportTraceRequestSchema.parse(body));
}

/**
 * Starts a plain OTLP/HTTP receiver on 127.0.0.1 (a free port): it accepts JSON exports
 * on /v1/traces (the body the SDK's OTLP/HTTP JSON exporter sends) and keeps their spans;
 * other signals are answered and only counted. No collector, no mock of the SDK.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      requests.push(path);
      if (req.method === 'POST' && path === '/v1/traces') {
        try {
          spans.push(...spansOfExport(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        } catch (error) {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: String(error) }));
          return;
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    waitFor: (find, what, timeoutMs = 60_000) =>
      waitFor(() => find(spans), { timeoutMs, intervalMs: 100, what }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
