import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { OutboxWriter, silentLogger, withTransaction } from '@outbox/core';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from '../src/http/errors.ts';
import { createTestDb, type TestDb } from './support/db.ts';

/**
 * The error handler's mapping of errors that the request caused but that no route
 * validation turned into an HttpError: the outbox writer refusing a payload built
 * from the request (a real append on the real schema), next to what must stay a 500.
 */
describe('error mapping: what the request caused is a 4xx, the rest a bare 500', () => {
  let db: TestDb;
  let server: Server;
  let url: string;
  const writer = new OutboxWriter();

  beforeAll(async () => {
    db = await createTestDb();
    const app = express();
    // A route that builds its payload from the request without validating the text
    // (as a careless new route might): which text is chosen by the path.
    const reasons: Record<string, string> = { nul: 'changed my mind\u0000', surrogate: '\ud800' };
    app.post('/append/:reason', async (req, res) => {
      await withTransaction(db.pool, async (c) => {
        await c.query(
          `INSERT INTO orders (id, user_id, sku, quantity, status, seq, mode)
           VALUES (gen_random_uuid(), 1, 'sku-1', 1, 'created', 1, 'outbox')`,
        );
        await writer.append(c, {
          aggregateType: 'order',
          aggregateId: 'o-1',
          eventType: 'OrderCancelled',
          payload: { reason: reasons[req.params.reason] },
        });
      });
      res.json({ ok: true });
    });
    app.get('/bug', () => {
      throw new Error('a bug, not the client');
    });
    app.get('/sql', async () => {
      await db.pool.query('SELECT no_such_column FROM orders');
    });
    app.use(errorHandler(silentLogger));
    server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await db.close();
  });

  it.each([
    ['NUL', 'nul', /NUL/],
    ['an unpaired surrogate', 'surrogate', /unpaired surrogate/],
  ])(
    'a payload with %s (PayloadNotSerializableError) → 400 with details, nothing written',
    async (_what, reason, message) => {
      const res = await fetch(`${url}/append/${reason}`, { method: 'POST' });
      expect({ status: res.status, body: await res.json() }).toMatchObject({
        status: 400,
        body: {
          error: 'invalid request body',
          details: [{ message: expect.stringMatching(message) }],
        },
      });
      expect(await db.counts()).toEqual({ orders: 0, outbox: 0, idempotency_keys: 0 });
    },
  );

  it('a bug and an SQL error stay a bare 500 (no message, no stack)', async () => {
    for (const path of ['/bug', '/sql']) {
      const res = await fetch(`${url}${path}`);
      expect(res.status, path).toBe(500);
      expect(await res.json()).toEqual({ error: 'internal error' });
    }
  });
});
