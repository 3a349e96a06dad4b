import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDashboard, type TestDashboard } from './support/dashboard.ts';
import { createTestDb, rawRequest, type TestDb } from '@outbox/testkit';
import { createOrder, markFailed } from './support/rows.ts';

interface Case {
  name: string;
  method?: string;
  path: string;
  /** Bytes as sent; an array is sent chunked. */
  body?: string | Buffer | Buffer[];
  contentType?: string;
  headers?: Record<string, string>;
  status: number;
  error: RegExp;
  issues?: boolean;
}

const json = (value: unknown) => JSON.stringify(value);
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
const invalid = { status: 400, error: /invalid body/, issues: true };
const invalidQuery = { status: 400, error: /invalid query/, issues: true };
const arm = '/api/failure-points/worker.kill_mid_publish';
const put = (path: string, body: string | Buffer, more: Partial<Case> = {}) => ({
  method: 'PUT',
  path,
  body,
  ...more,
});

/**
 * The classes order-api's bad-input table checks (issue 10, defect 8), on every
 * dashboard endpoint that takes client text: control bodies (mode, traffic, failure
 * points, reset, requeue) and the read queries and ids. Raw JSON text where
 * JSON.stringify could not write the case.
 */
const cases: Case[] = [
  // Text PostgreSQL cannot store, anywhere in a body.
  { name: 'mode with NUL', ...put('/api/mode', json({ mode: 'naive\u0000' })), ...invalid },
  {
    name: 'NUL in a field mode ignores',
    ...put('/api/mode', json({ mode: 'naive', note: '\u0000' })),
    ...invalid,
  },
  {
    name: 'unpaired surrogate in a field traffic ignores',
    ...put('/api/traffic', '{"rate":5,"note":"\\ud800"}'),
    ...invalid,
  },
  {
    name: 'arm with NUL in a key',
    path: arm,
    body: json({ mode: 'once', 'k\u0000': 1 }),
    ...invalid,
  },
  {
    name: 'reset with NUL in its body',
    path: '/api/reset',
    body: json({ x: '\u0000' }),
    ...invalid,
  },
  // Numbers past 2^53.
  { name: 'traffic 1e400', ...put('/api/traffic', '{"rate":1e400}'), ...invalid },
  { name: 'traffic 2^53+1', ...put('/api/traffic', '{"rate":9007199254740993}'), ...invalid },
  {
    name: 'arm times 2^53+1',
    path: arm,
    body: '{"mode":"times","times":9007199254740993}',
    ...invalid,
  },
  {
    name: 'mode with 1e400 beside it',
    ...put('/api/mode', '{"mode":"naive","n":1e400}'),
    ...invalid,
  },
  // Duplicate keys: which one did the client mean?
  { name: 'two modes', ...put('/api/mode', '{"mode":"naive","mode":"outbox"}'), ...invalid },
  { name: 'two rates', ...put('/api/traffic', '{"rate":5,"rate":6}'), ...invalid },
  {
    name: 'arm with two times',
    path: arm,
    body: '{"mode":"times","times":2,"times":1000}',
    ...invalid,
  },
  // Charsets and bytes.
  {
    name: 'charset=latin1',
    ...put('/api/mode', json({ mode: 'naive' }), {
      contentType: 'application/json; charset=latin1',
    }),
    status: 415,
    error: /charset/,
  },
  {
    name: 'charset=utf-16, UTF-16 bytes',
    ...put('/api/mode', Buffer.from(`\ufeff${json({ mode: 'naive' })}`, 'utf16le'), {
      contentType: 'application/json; charset=utf-16',
    }),
    status: 415,
    error: /charset/,
  },
  {
    name: 'a 0xff byte in a field mode ignores',
    ...put('/api/mode', bytes('{"mode":"naive","x":"', [0xff], '"}')),
    status: 400,
    error: /UTF-8/,
  },
  // Structure and size.
  {
    name: 'nested 7,000 deep',
    ...put('/api/mode', `{"mode":"naive","x":${nested(7_000)}}`),
    ...invalid,
  },
  {
    name: 'Content-Length of 10 GB',
    ...put('/api/mode', '{}', { headers: { 'content-length': '10000000000' } }),
    status: 413,
    error: /too large/,
  },
  {
    name: 'gzip bomb',
    ...put('/api/mode', gzipSync(`{"mode":"naive","x":"${' '.repeat(1 << 20)}"}`), {
      headers: { 'content-encoding': 'gzip' },
    }),
    status: 413,
    error: /too large/,
  },
  {
    name: 'Content-Encoding: gzip, bytes that are not gzip',
    ...put('/api/mode', json({ mode: 'naive' }), { headers: { 'content-encoding': 'gzip' } }),
    status: 400,
    error: /decompress/,
  },
  // Ids and queries.
  {
    name: 'requeue of an id past bigint',
    path: '/api/outbox/9999999999999999999/requeue',
    status: 400,
    error: /outbox id/,
    issues: true,
  },
  {
    name: 'requeue with malformed percent-encoding',
    path: '/api/outbox/%ff/requeue',
    status: 400,
    error: /percent-encoding/,
  },
  {
    name: 'arm with malformed percent-encoding',
    path: '/api/failure-points/%E0%A4%A',
    body: json({ mode: 'once' }),
    status: 400,
    error: /percent-encoding/,
  },
  {
    name: 'journey with malformed percent-encoding',
    method: 'GET',
    path: '/api/orders/%E0%A4%A/journey',
    status: 400,
    error: /percent-encoding/,
  },
  {
    name: 'outbox ?aggregateId=%00',
    method: 'GET',
    path: '/api/outbox?aggregateId=%00',
    ...invalidQuery,
  },
  {
    name: 'outbox ?eventType=Order%00Created',
    method: 'GET',
    path: '/api/outbox?eventType=Order%00Created',
    ...invalidQuery,
  },
  {
    name: 'outbox ?aggregateId= with U+0001',
    method: 'GET',
    path: '/api/outbox?aggregateId=a%01b',
    ...invalidQuery,
  },
  {
    name: 'outbox ?cursor= past bigint',
    method: 'GET',
    path: '/api/outbox?cursor=99999999999999999999',
    ...invalidQuery,
  },
  { name: 'outbox ?limit=1e400', method: 'GET', path: '/api/outbox?limit=1e400', ...invalidQuery },
  {
    name: 'events ?limit=9007199254740993',
    method: 'GET',
    path: '/api/events?limit=9007199254740993',
    ...invalidQuery,
  },
  {
    name: 'audit ?settleSeconds=1e400',
    method: 'GET',
    path: '/api/audit?settleSeconds=1e400',
    ...invalidQuery,
  },
];

describe('bad input on the dashboard: a 4xx JSON error and nothing written', () => {
  let db: TestDb;
  let dash: TestDashboard;

  /** Everything a control endpoint may change, as one comparable value. */
  async function snapshot(): Promise<unknown> {
    const { rows } = await db.pool.query(
      `SELECT (SELECT coalesce(json_agg(s ORDER BY key), '[]') FROM demo_settings s) AS settings,
              (SELECT coalesce(json_agg(json_build_array(name, mode, remaining, params) ORDER BY name), '[]')
                 FROM failure_points) AS failure_points,
              (SELECT coalesce(json_agg(json_build_array(id, attempts, dead_lettered_at, next_attempt_at) ORDER BY id), '[]')
                 FROM outbox) AS outbox,
              (SELECT count(*)::int FROM orders) AS orders`,
    );
    return rows[0];
  }

  beforeAll(async () => {
    db = await createTestDb({ stock: 1000, max: 6 });
    dash = await startTestDashboard(db);
    // Something for reset and requeue to change if they ran.
    const dead = await createOrder(db.pool);
    await markFailed(db.pool, dead.outboxId!, 'no topic for aggregate type "order"', true);
  });
  afterAll(async () => {
    await dash?.close();
    await db?.close();
  });

  it.each(cases)('$name → $status', async (c) => {
    const before = await snapshot();
    const method = c.method ?? 'POST';
    const headers: Record<string, string> = { ...c.headers };
    if (c.body !== undefined) headers['content-type'] = c.contentType ?? 'application/json';
    const res = await rawRequest(dash.url, {
      method,
      path: c.path,
      headers,
      ...(c.body !== undefined ? { body: c.body } : {}),
    });
    expect({ status: res.status, body: res.json }).toMatchObject({ status: c.status });
    expect(res.headers['content-type']).toMatch(/application\/json/);
    const body = res.json as { error: unknown; issues?: unknown };
    expect(body.error).toMatch(c.error);
    if (c.issues) expect(body.issues).toEqual(expect.any(Array));
    expect(res.text).not.toMatch(/at .*\.ts:\d+/);
    expect(await snapshot()).toEqual(before);
  });

  it.each<[string, string, string | Buffer, Record<string, string>?]>([
    ['a byte order mark', '/api/mode', `\ufeff${json({ mode: 'naive' })}`],
    [
      'charset="UTF-8"',
      '/api/mode',
      json({ mode: 'outbox' }),
      { 'content-type': 'application/json; charset="UTF-8"' },
    ],
    ['a gzip body', '/api/traffic', gzipSync(json({ rate: 2.5 })), { 'content-encoding': 'gzip' }],
    ['a non-ASCII note beside the rate', '/api/traffic', json({ rate: 3, note: 'café ☕ 😀' })],
  ])('odd but valid: %s → 200', async (_what, path, body, headers = {}) => {
    const res = await rawRequest(dash.url, {
      method: 'PUT',
      path,
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    expect({ status: res.status, body: res.json }).toMatchObject({ status: 200 });
  });

  it.each(['caf%C3%A9', '%F0%9F%98%80', '%E2%80%AEabc'])(
    'odd but valid query text ?aggregateId=%s → 200',
    async (value) => {
      const res = await rawRequest(dash.url, {
        method: 'GET',
        path: `/api/outbox?aggregateId=${value}`,
      });
      expect({ status: res.status, body: res.json }).toMatchObject({
        status: 200,
        body: { rows: [] },
      });
    },
  );
});
