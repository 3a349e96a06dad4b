import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { createTestDb, type TestDb } from './support/db.ts';
import { createTopicPrefix, testKafka } from '@outbox/testkit';

interface Case {
  name: string;
  path?: string;
  method?: string;
  body?: string;
  contentType?: string | null;
  status: number;
  error: RegExp;
  details?: boolean;
}

const valid = { userId: 1, sku: 'sku-1', quantity: 1 };
const json = (value: unknown) => JSON.stringify(value);

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
    status: 400,
    error: /Idempotency-Key/,
  },
];

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
    const headers: Record<string, string> = {};
    if (c.contentType !== null) headers['content-type'] = c.contentType ?? 'application/json';
    if (c.name === 'bad Idempotency-Key') headers['idempotency-key'] = 'has spaces in it';
    const method = c.method ?? 'POST';
    const res = await fetch(`${app.url}${c.path ?? '/orders'}`, {
      method,
      headers,
      ...(method === 'POST' && c.body !== undefined ? { body: c.body } : {}),
    });
    expect(res.status).toBe(c.status);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const body = (await res.json()) as { error: unknown; details?: unknown; stack?: unknown };
    expect(body.error).toMatch(c.error);
    if (c.details) expect(body.details).toEqual(expect.any(Array));
    expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+/);
    expect(await db.counts()).toEqual({ orders: 0, outbox: 0, idempotency_keys: 0 });
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
