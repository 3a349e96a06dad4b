import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pg from 'pg';
import { z } from 'zod';
import { serveWorker, workerSpec } from '../env/worker.ts';

/**
 * BASELINE, not a service: the reference for scenario 5's ratio. `POST /orders` with
 * order-api's validation (the same zod schema, JSON body parser and limit) and a
 * plain INSERT of the order (the same statement as order-api's) with no outbox, no
 * transaction block, no event: what the endpoint costs without the pattern.
 */
export interface PlainServerSpec {
  databaseUrl: string;
  schema: string;
}

const spec = workerSpec<PlainServerSpec>();
// order-api's pool size, so both servers can hold as many transactions open.
const pool = new pg.Pool({
  connectionString: spec.databaseUrl,
  options: `-c search_path=${spec.schema}`,
  max: 20,
});
pool.on('error', () => undefined);

const int32 = z.number().int().positive().max(2_147_483_647);
const createOrderBody = z.object({
  userId: int32,
  sku: z.string().min(1).max(200),
  quantity: int32,
  mode: z.enum(['outbox', 'naive']).optional(),
});

const app = express();
app.disable('x-powered-by');
app.post('/orders', express.json({ limit: '16kb', strict: true }), async (req, res) => {
  const parsed = createOrderBody.safeParse(req.body);
  if (!parsed.success) {
    res.status(400).json({ error: 'invalid request body' });
    return;
  }
  const orderId = randomUUID();
  const { rowCount } = await pool.query(
    `INSERT INTO orders (id, user_id, sku, quantity, status, seq, mode)
     SELECT $1, $2, i.sku, $4, 'created', 1, 'plain' FROM inventory i WHERE i.sku = $3`,
    [orderId, parsed.data.userId, parsed.data.sku, parsed.data.quantity],
  );
  if (rowCount !== 1) {
    res.status(422).json({ error: 'unknown sku' });
    return;
  }
  res.status(201).json({ orderId });
});

// A failed INSERT is a 500 with its cause on stderr (express 5 passes async errors here).
app.use(
  (error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    process.stderr.write(`plain-server: ${error.message}\n`);
    res.status(500).json({ error: 'internal error' });
  },
);

// ANALYSIS, not a service: the order and its outbox row written by one statement (one
// round trip, one implicit transaction), to measure how much of outbox mode's cost is
// its four round trips (BEGIN, INSERT, INSERT, COMMIT) rather than the extra row.
app.post(
  '/orders-one-statement',
  express.json({ limit: '16kb', strict: true }),
  async (req, res) => {
    const parsed = createOrderBody.safeParse(req.body);
    if (!parsed.success) {
      res.status(400).json({ error: 'invalid request body' });
      return;
    }
    const orderId = randomUUID();
    const { userId, sku, quantity } = parsed.data;
    const payload = { orderId, userId, sku, quantity, seq: 1, source: 'api' };
    const { rows } = await pool.query<{ id: string }>(
      `WITH o AS (
       INSERT INTO orders (id, user_id, sku, quantity, status, seq, mode)
       SELECT $1, $2, i.sku, $4, 'created', 1, 'outbox' FROM inventory i WHERE i.sku = $3
       RETURNING id)
     INSERT INTO outbox (aggregate_type, aggregate_id, event_type, event_version, payload, headers)
     SELECT 'order', o.id::text, 'OrderCreated', 2, $5, $6 FROM o RETURNING id`,
      [
        orderId,
        userId,
        sku,
        quantity,
        JSON.stringify(payload),
        JSON.stringify({ correlationId: randomUUID() }),
      ],
    );
    if (rows.length !== 1) {
      res.status(422).json({ error: 'unknown sku' });
      return;
    }
    res.status(201).json({ orderId, eventId: rows[0]!.id });
  },
);

const server = createServer(app);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

serveWorker({ port: () => (server.address() as AddressInfo).port }, async () => {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  await pool.end();
});
