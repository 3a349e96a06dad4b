import { request } from 'node:http';

export interface RawRequest {
  method?: string;
  /** Path and query, sent as written (no normalisation, no re-encoding). */
  path: string;
  /** An array value sends the header once per element (duplicate headers). */
  headers?: Record<string, string | string[]>;
  /**
   * Bytes sent as they are. An array is sent chunk by chunk with
   * Transfer-Encoding: chunked (no Content-Length) unless a header sets one.
   * Without a body no Content-Length is sent.
   */
  body?: string | Buffer | Buffer[];
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

/**
 * One HTTP request with node:http, for what fetch will not send: duplicate headers, a
 * Content-Length that lies, chunked bodies, raw bytes in the path. A connection the
 * server cuts (it may, after a body it refused) resolves with status 0.
 */
export function rawRequest(baseUrl: string, req: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const chunks =
    req.body === undefined ? [] : Array.isArray(req.body) ? req.body : [Buffer.from(req.body)];
  const headers: Record<string, string | string[]> = { ...req.headers };
  const named = (name: string) => Object.keys(headers).some((k) => k.toLowerCase() === name);
  const fixedLength = req.body !== undefined && !Array.isArray(req.body);
  if (fixedLength && !named('content-length') && !named('transfer-encoding')) {
    headers['content-length'] = String(chunks.reduce((n, c) => n + c.length, 0));
  }
  return new Promise((resolve, reject) => {
    const r = request(
      {
        host: url.hostname,
        port: url.port,
        method: req.method ?? 'POST',
        path: req.path,
        headers,
        // A request that lies about its length must not hang the test.
        timeout: 30_000,
      },
      (res) => {
        const body: Buffer[] = [];
        res.on('data', (c: Buffer) => body.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(body).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    r.on('timeout', () => r.destroy(new Error(`no answer to ${req.method} ${req.path}`)));
    r.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') {
        resolve({ status: 0, headers: {}, text: '', json: undefined });
      } else {
        reject(error);
      }
    });
    for (const chunk of chunks) r.write(chunk);
    r.end();
  });
}
