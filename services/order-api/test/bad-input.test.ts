import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { createTestDb, type TestDb } from './support/db.ts';
import { createTopicPrefix, rawRequest, testKafka } from '@outbox/testkit';

interface Case {
  name: string;
  path?: string;
  method?: string;
  /** Bytes as sent; an array is sent chunked. */
  body?: string | Buffer | Buffer[];
  contentType?: string | null;
  headers?: Record<string, string | string[]>;
  status: number;
  error: RegExp;
  details?: boolean;
}

const valid = { userId: 1, sku: 'sku-1', quantity: 1 };
const json = (value: unknown) => JSON.stringify(value);
/** A valid order's JSON with `tail` spliced in before the closing brace. */
const orderWith = (tail: string) => `{"userId":1,"sku":"sku-1","quantity":1,${tail}}`;
const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

const cases: Case[] = [
  { name: 'malformed JSON', body: '{"userId": 1,', status: 400, error: /malformed JSON/ },
  { name: 'a JSON string, not an object', body: '"hello"', status: 400, error: /malformed JSON/ },
  { name: 'no body', body: '', contentType: null, status: 400, error: /invalid request body/ },
  {
    name: 'missing fields',
    body: json({ sku: 'sku-1' }),
    status: 400,
    error: /invalid request body/,
    details: true,
  },
  {
    name: 'wrong types',
    body: json({ userId: '1', sku: 5, quantity: 1.5 }),
    status: 400,
    error: /invalid request body/,
    details: true,
  },
  {
    name: 'quantity 0',
    body: json({ ...valid, quantity: 0 }),
    status: 400,
    error: /invalid request body/,
    details: true,
  },
  {
    name: 'negative quantity',
    body: json({ ...valid, quantity: -3 }),
    status: 400,
    error: /invalid request body/,
    details: true,
  },
  {
    name: 'userId over INT',
    body: json({ ...valid, userId: 2 ** 31 }),
    status: 400,
    error: /invalid request body/,
    details: true,
  },
  {
    name: 'unknown mode',
    body: json({ ...valid, mode: 'yolo' }),
    status: 400,
    error: /invalid request body/,
    details: true,
  },
  {
    name: 'unknown ?mode=',
    path: '/orders?mode=yolo',
    body: json(valid),
    status: 400,
    error: /invalid query/,
    details: true,
  },
  {
    name: 'body too large',
    body: json({ ...valid, sku: 'x'.repeat(20_000) }),
    status: 413,
    error: /too large/,
  },
  { name: 'unknown sku', body: json({ ...valid, sku: 'nope' }), status: 422, error: /unknown sku/ },
  {
    name: 'wrong content type',
    body: json(valid),
    contentType: 'text/plain',
    status: 415,
    error: /application\/json/,
  },
  {
    name: 'form-encoded body',
    body: 'userId=1&sku=sku-1&quantity=1',
    contentType: 'application/x-www-form-urlencoded',
    status: 415,
    error: /application\/json/,
  },
  {
    name: 'pay of an unknown order',
    path: `/orders/${randomUUID()}/pay`,
    status: 404,
    error: /not found/,
  },
  { name: 'pay of a non-uuid id', path: '/orders/42/pay', status: 404, error: /not found/ },
  {
    name: 'GET of a non-uuid id',
    path: '/orders/abc',
    method: 'GET',
    status: 404,
    error: /not found/,
  },
  {
    name: 'GET of an unknown order',
    path: `/orders/${randomUUID()}`,
    method: 'GET',
    status: 404,
    error: /not found/,
  },
  {
    name: 'cancel with a non-string reason',
    path: `/orders/${randomUUID()}/cancel`,
    body: json({ reason: 5 }),
    status: 400,
    error: /invalid request body/,
    details: true,
  },
  { name: 'unknown route', path: '/nope', method: 'GET', status: 404, error: /no route/ },
  {
    name: 'bad Idempotency-Key',
    body: json(valid),
    headers: { 'idempotency-key': 'has spaces in it' },
    status: 400,
    error: /Idempotency-Key/,
  },
  ...missedClasses(),
];

/**
 * The classes the first table missed (issue 10, defect 8): text PostgreSQL cannot
 * store, control characters, unpaired surrogates, numbers past 2^53, duplicate keys,
 * charsets other than UTF-8, bytes that are not UTF-8, deep nesting, bodies that are
 * huge or compressed, malformed URLs, Idempotency-Key oddities. Raw JSON text where
 * JSON.stringify could not write the case.
 */
function missedClasses(): Case[] {
  const invalid = { status: 400, error: /invalid request body/, details: true };
  const cancel = `/orders/${randomUUID()}/cancel`;
  return [
    // Text PostgreSQL cannot store: NUL (22021), unpaired surrogates (jsonb 22P02).
    { name: 'NUL in sku', body: json({ ...valid, sku: 'sku-1\u0000' }), ...invalid },
    {
      name: 'NUL in a field the API ignores',
      body: json({ ...valid, note: 'a\u0000' }),
      ...invalid,
    },
    { name: 'NUL in a key', body: json({ ...valid, 'k\u0000': 1 }), ...invalid },
    {
      name: 'NUL in the cancel reason',
      path: cancel,
      body: json({ reason: '\u0000' }),
      ...invalid,
    },
    {
      name: 'unpaired high surrogate in sku',
      body: '{"userId":1,"sku":"\\ud800","quantity":1}',
      ...invalid,
    },
    {
      name: 'unpaired low surrogate in sku',
      body: '{"userId":1,"sku":"x\\udc00","quantity":1}',
      ...invalid,
    },
    {
      name: 'surrogates in the wrong order',
      body: '{"userId":1,"sku":"\\ude00\\ud83d","quantity":1}',
      ...invalid,
    },
    {
      name: 'unpaired surrogate in the cancel reason',
      path: cancel,
      body: '{"reason":"\\udbff"}',
      ...invalid,
    },
    // Control characters: nothing a sku or a reason means.
    { name: 'U+0001 in sku', body: json({ ...valid, sku: 'sku-\u0001' }), ...invalid },
    { name: 'newline in sku', body: json({ ...valid, sku: 'sku-1\n' }), ...invalid },
    { name: 'DEL in sku', body: json({ ...valid, sku: 'sku-1\u007f' }), ...invalid },
    {
      name: 'C1 control (U+0085) in sku',
      body: json({ ...valid, sku: 'sku-1\u0085' }),
      ...invalid,
    },
    {
      name: 'ESC sequence in the cancel reason',
      path: cancel,
      body: json({ reason: '\u001b[2J' }),
      ...invalid,
    },
    // Numbers past 2^53: JSON.parse rounds them (…993 → …992) or makes Infinity.
    {
      name: 'quantity 9007199254740993',
      body: '{"userId":1,"sku":"sku-1","quantity":9007199254740993}',
      ...invalid,
    },
    { name: 'quantity 1e400', body: '{"userId":1,"sku":"sku-1","quantity":1e400}', ...invalid },
    { name: 'userId -1e400', body: '{"userId":-1e400,"sku":"sku-1","quantity":1}', ...invalid },
    {
      name: '2^53+1 in a field the API ignores',
      body: orderWith('"n":9007199254740993'),
      ...invalid,
    },
    { name: '1e400 in a field the API ignores', body: orderWith('"n":1e400'), ...invalid },
    // Duplicate keys: JSON.parse keeps the last; a proxy or a log reader may keep the first.
    {
      name: 'duplicate sku',
      body: '{"userId":1,"sku":"nope","sku":"sku-1","quantity":1}',
      ...invalid,
    },
    { name: 'duplicate quantity', body: orderWith('"quantity":2'), ...invalid },
    {
      name: 'duplicate key spelled with an escape',
      body: orderWith('"qu\\u0061ntity":2'),
      ...invalid,
    },
    { name: 'duplicate key in a nested object', body: orderWith('"x":{"a":1,"a":2}'), ...invalid },
    { name: 'duplicate reason', path: cancel, body: '{"reason":"a","reason":"b"}', ...invalid },
    // Charsets: JSON is UTF-8 (RFC 8259 §8.1).
    {
      name: 'charset=latin1',
      body: json(valid),
      contentType: 'application/json; charset=latin1',
      status: 415,
      error: /charset/,
    },
    {
      name: 'charset=utf-16, UTF-8 bytes',
      body: json(valid),
      contentType: 'application/json; charset=utf-16',
      status: 415,
      error: /charset/,
    },
    {
      name: 'charset=utf-16, UTF-16 bytes',
      body: Buffer.from(`\ufeff${json(valid)}`, 'utf16le'),
      contentType: 'application/json; charset=utf-16',
      status: 415,
      error: /charset/,
    },
    {
      name: 'charset=utf-7',
      body: json(valid),
      contentType: 'application/json; charset=utf-7',
      status: 415,
      error: /charset/,
    },
    {
      name: 'charset=utf-32',
      body: json(valid),
      contentType: 'application/json; charset=utf-32',
      status: 415,
      error: /charset/,
    },
    // Bytes that are not UTF-8 (the old decoder made U+FFFD of them, silently).
    {
      name: 'a 0xff byte in sku',
      body: bytes('{"userId":1,"sku":"sku-1', [0xff], '","quantity":1}'),
      status: 400,
      error: /UTF-8/,
    },
    {
      name: 'an overlong "/" (0xc0 0xaf) in sku',
      body: bytes('{"userId":1,"sku":"sku', [0xc0, 0xaf], '1","quantity":1}'),
      status: 400,
      error: /UTF-8/,
    },
    {
      name: 'an encoded surrogate (0xed 0xa0 0x80)',
      body: bytes('{"userId":1,"sku":"', [0xed, 0xa0, 0x80], '","quantity":1}'),
      status: 400,
      error: /UTF-8/,
    },
    {
      name: 'a truncated sequence in an ignored field',
      body: bytes(orderWith('"x":"'), [0xe2, 0x82], '"}'),
      status: 400,
      error: /UTF-8/,
    },
    // Structure.
    { name: 'nested 33 deep', body: orderWith(`"x":${nested(32)}`), ...invalid },
    {
      name: 'nested 7,000 deep with an Idempotency-Key',
      body: orderWith(`"x":${nested(7_000)}`),
      headers: { 'idempotency-key': 'deep-1' },
      ...invalid,
    },
    // Passed on the old code too, kept as a guard: a __proto__ key is an own property
    // after JSON.parse, it does not lend the body a userId.
    {
      name: '__proto__ carrying userId',
      body: '{"__proto__":{"userId":1},"sku":"sku-1","quantity":1}',
      ...invalid,
    },
    // Huge and compressed bodies.
    {
      name: 'chunked body over the limit',
      body: Array.from({ length: 20 }, () => Buffer.from(' '.repeat(1024))),
      status: 413,
      error: /too large/,
    },
    {
      name: 'Content-Length of 10 GB',
      body: '{}',
      headers: { 'content-length': '10000000000' },
      status: 413,
      error: /too large/,
    },
    {
      name: 'gzip bomb: 1 MiB of spaces in ~1 kB',
      body: gzipSync(orderWith(`"x":"${' '.repeat(1 << 20)}"`)),
      headers: { 'content-encoding': 'gzip' },
      status: 413,
      error: /too large/,
    },
    {
      name: 'Content-Encoding: gzip, bytes that are not gzip',
      body: json(valid),
      headers: { 'content-encoding': 'gzip' },
      status: 400,
      error: /decompress/,
    },
    {
      name: 'Content-Encoding: compress',
      body: json(valid),
      headers: { 'content-encoding': 'compress' },
      status: 415,
      error: /encoding/,
    },
    // URLs.
    {
      name: 'GET with malformed percent-encoding in the id',
      path: '/orders/%E0%A4%A',
      method: 'GET',
      status: 400,
      error: /percent-encoding/,
    },
    {
      name: 'pay with malformed percent-encoding in the id',
      path: '/orders/%ff%/pay',
      status: 400,
      error: /percent-encoding/,
    },
    // Idempotency-Key oddities: each refused before anything is claimed.
    {
      name: 'empty Idempotency-Key',
      body: json(valid),
      headers: { 'idempotency-key': '' },
      status: 400,
      error: /Idempotency-Key/,
    },
    {
      name: 'Idempotency-Key of 256 characters',
      body: json(valid),
      headers: { 'idempotency-key': 'k'.repeat(256) },
      status: 400,
      error: /Idempotency-Key/,
    },
    {
      name: 'Idempotency-Key in latin1 (é)',
      body: json(valid),
      headers: { 'idempotency-key': 'cl\u00e9' },
      status: 400,
      error: /Idempotency-Key/,
    },
    {
      name: 'Idempotency-Key in UTF-8 bytes',
      body: json(valid),
      headers: { 'idempotency-key': Buffer.from('ключ').toString('latin1') },
      status: 400,
      error: /Idempotency-Key/,
    },
    {
      name: 'Idempotency-Key with a tab',
      body: json(valid),
      headers: { 'idempotency-key': 'a\tb' },
      status: 400,
      error: /Idempotency-Key/,
    },
    {
      name: 'Idempotency-Key sent twice',
      body: json(valid),
      headers: { 'idempotency-key': ['k-1', 'k-2'] },
      status: 400,
      error: /Idempotency-Key/,
    },
    {
      name: 'a good Idempotency-Key on a body with NUL',
      body: json({ ...valid, sku: '\u0000' }),
      headers: { 'idempotency-key': 'k-nul' },
      ...invalid,
    },
  ];
}

describe('bad input: a 4xx JSON error and nothing written', () => {
  let db: TestDb;
  let app: TestApp;

  beforeAll(async () => {
    db = await createTestDb();
    const { prefix } = await createTopicPrefix(testKafka());
    app = await startTestApp(db, prefix);
  });
  afterAll(async () => {
    await app.close();
    await db.close();
  });

  it.each(cases)('$name → $status', async (c) => {
    // Compared with the counts before, so one case that writes fails alone.
    const before = await db.counts();
    const headers: Record<string, string | string[]> = { ...c.headers };
    if (c.contentType !== null) headers['content-type'] = c.contentType ?? 'application/json';
    const method = c.method ?? 'POST';
    const res = await rawRequest(app.url, {
      method,
      path: c.path ?? '/orders',
      headers,
      ...(method === 'POST' && c.body !== undefined ? { body: c.body } : {}),
    });
    expect({ status: res.status, body: res.json }).toMatchObject({ status: c.status });
    expect(res.headers['content-type']).toMatch(/application\/json/);
    const body = res.json as { error: unknown; details?: unknown; stack?: unknown };
    expect(body.error).toMatch(c.error);
    if (c.details) expect(body.details).toEqual(expect.any(Array));
    expect(res.text).not.toMatch(/at .*\.ts:\d+/);
    expect(await db.counts()).toEqual(before);
  });

  it('an unknown sku with an Idempotency-Key stores no key either', async () => {
    const res = await app.request('/orders', {
      json: { ...valid, sku: 'nope' },
      headers: { 'idempotency-key': 'k-unknown-sku' },
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: 'unknown sku', details: { sku: 'nope' } });
    expect(await db.counts()).toEqual({ orders: 0, outbox: 0, idempotency_keys: 0 });
  });
});

describe('bad input against a real order: the cancel is refused and the order is unchanged', () => {
  let db: TestDb;
  let app: TestApp;

  beforeAll(async () => {
    db = await createTestDb();
    const { prefix } = await createTopicPrefix(testKafka());
    app = await startTestApp(db, prefix);
  });
  afterAll(async () => {
    await app.close();
    await db.close();
  });

  async function createOrder(): Promise<string> {
    const res = await app.request('/orders', { json: valid });
    expect(res.status).toBe(201);
    return res.body.orderId as string;
  }

  /** The order's status and seq, and the event types in its outbox rows. */
  async function orderState(id: string) {
    const order = await db.pool.query('SELECT status, seq FROM orders WHERE id = $1', [id]);
    const outbox = await db.pool.query(
      'SELECT event_type FROM outbox WHERE aggregate_id = $1 ORDER BY id',
      [id],
    );
    return { ...order.rows[0], events: outbox.rows.map((r) => r.event_type as string) };
  }

  // Raw JSON text: the reason as the client wrote it.
  it.each([
    ['NUL', '{"reason":"\\u0000"}'],
    ['NUL after text', '{"reason":"changed my mind\\u0000"}'],
    ['an unpaired surrogate', '{"reason":"\\ud800"}'],
    ['an ESC sequence', '{"reason":"\\u001b[31mred"}'],
    ['a C1 control (U+009B)', '{"reason":"\\u009b2J"}'],
    ['two reasons', '{"reason":"a","reason":"b"}'],
    ['1e400 beside the reason', '{"reason":"a","n":1e400}'],
  ])('reason with %s → 400, nothing written', async (_what, body) => {
    const id = await createOrder();
    const res = await rawRequest(app.url, {
      path: `/orders/${id}/cancel`,
      headers: { 'content-type': 'application/json', 'idempotency-key': `cancel-${randomUUID()}` },
      body,
    });
    expect({ status: res.status, body: res.json }).toMatchObject({
      status: 400,
      body: { error: 'invalid request body', details: expect.any(Array) },
    });
    expect(await orderState(id)).toEqual({ status: 'created', seq: 1, events: ['OrderCreated'] });
    const keys = await db.pool.query('SELECT count(*)::int AS n FROM idempotency_keys');
    expect(keys.rows[0].n).toBe(0);
  });

  // What must still pass: text that looks odd but is text.
  it.each([
    ['an emoji', '{"reason":"changed my mind 😀"}', 'changed my mind 😀'],
    ['an escaped surrogate pair', '{"reason":"\\ud83d\\ude00"}', '😀'],
    [
      'newlines and tabs',
      '{"reason":"line one\\nline two\\ttabbed"}',
      'line one\nline two\ttabbed',
    ],
    ['a backslash before u0000', '{"reason":"C:\\\\u0000 is a path"}', 'C:\\u0000 is a path'],
    ['right-to-left text', '{"reason":"إلغاء"}', 'إلغاء'],
  ])('reason with %s → 200, the event carries it', async (_what, body, reason) => {
    const id = await createOrder();
    const res = await rawRequest(app.url, {
      path: `/orders/${id}/cancel`,
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect({ status: res.status, body: res.json }).toMatchObject({ status: 200 });
    const { rows } = await db.pool.query(
      "SELECT payload FROM outbox WHERE aggregate_id = $1 AND event_type = 'OrderCancelled'",
      [id],
    );
    expect(rows[0]?.payload).toMatchObject({ reason });
  });
});

describe('odd but valid input is accepted', () => {
  let db: TestDb;
  let app: TestApp;

  beforeAll(async () => {
    db = await createTestDb();
    await db.pool.query("INSERT INTO inventory (sku, available) VALUES ('café-☕', 10)");
    const { prefix } = await createTopicPrefix(testKafka());
    app = await startTestApp(db, prefix);
  });
  afterAll(async () => {
    await app.close();
    await db.close();
  });

  it.each<[string, { body: string | Buffer; headers?: Record<string, string> }]>([
    ['a non-ASCII sku', { body: json({ ...valid, sku: 'café-☕' }) }],
    [
      'a non-ASCII sku written as escapes',
      { body: '{"userId":1,"sku":"caf\\u00e9-\\u2615","quantity":1}' },
    ],
    ['a UTF-8 byte order mark', { body: `\ufeff${json(valid)}` }],
    [
      'charset="UTF-8", quoted, upper case',
      { body: json(valid), headers: { 'content-type': 'application/json; charset="UTF-8"' } },
    ],
    ['quantity written 1.0', { body: '{"userId":1,"sku":"sku-1","quantity":1.0}' }],
    ['2^53-1 in an ignored field', { body: orderWith('"n":9007199254740991') }],
    ['nested 32 deep in an ignored field', { body: orderWith(`"x":${nested(31)}`) }],
    ['a gzip body', { body: gzipSync(json(valid)), headers: { 'content-encoding': 'gzip' } }],
    [
      'a 255-character Idempotency-Key',
      { body: json(valid), headers: { 'idempotency-key': '~'.repeat(255) } },
    ],
  ])('%s → 201', async (_what, c) => {
    const before = await db.counts();
    const res = await rawRequest(app.url, {
      path: '/orders',
      headers: { 'content-type': 'application/json', ...c.headers },
      body: c.body,
    });
    expect({ status: res.status, body: res.json }).toMatchObject({ status: 201 });
    const after = await db.counts();
    expect(after.orders - before.orders).toBe(1);
    expect(after.outbox - before.outbox).toBe(1);
  });
});
