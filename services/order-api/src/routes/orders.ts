import { randomUUID } from 'node:crypto';
import { clientText, jsonBody } from '@outbox/lab';
import { trace } from '@opentelemetry/api';
import { Router, type Request, type Response } from 'express';
import type { Pool } from 'pg';
import { z } from 'zod';
import { orderModes, type OrderMode } from '../config.ts';
import { HttpError, zodDetails } from '../http/errors.ts';
import { readIdempotencyKey, type HttpResult } from '../http/idempotency.ts';
import type { CreateOrderHandler } from '../orders/create-order.ts';
import { resolveMode } from '../orders/mode.ts';
import { readOrder } from '../orders/read-order.ts';
import type { TransitionAction, TransitionHandler } from '../orders/transition.ts';

// Columns are INT: larger numbers would fail in PostgreSQL as a 500 instead of a 400.
const int32 = z.number().int().positive().max(2_147_483_647);
const createOrderBody = z.object({
  userId: int32,
  // clientText: no NUL, unpaired surrogate or control character (the lab's one rule).
  sku: clientText({ max: 200 }),
  quantity: int32,
  mode: z.enum(orderModes).optional(),
});
const modeQuery = z.object({ mode: z.enum(orderModes).optional() });
const cancelBody = z
  .object({ reason: clientText({ max: 1_000, min: 0, multiline: true }).optional() })
  .optional();
const payBody = z.object({}).optional();

// Any UUID-shaped id; anything else cannot be an order (and would make PostgreSQL
// fail the ::uuid cast), so it is a 404 without a query.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEADER_VALUE = /^[\x20-\x7e]{1,512}$/;

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new HttpError(400, `invalid ${what}`, zodDetails(parsed.error));
  return parsed.data;
}

/** Correlation id (given or new) and trace context, for the event's Kafka headers. */
function eventHeaders(req: Request, res: Response): Record<string, string> {
  const given = req.get('x-correlation-id');
  if (given !== undefined && !HEADER_VALUE.test(given)) {
    throw new HttpError(400, 'X-Correlation-Id must be 1-512 printable ASCII characters');
  }
  const correlationId = given ?? randomUUID();
  res.set('X-Correlation-Id', correlationId);
  // Traced (an OpenTelemetry SDK is on, see docs/tracing.md; sampled or not, the request
  // then has a span): the server span has taken up the client's traceparent, and core's
  // writer stores its own span's context, a child of this request. Not traced: the
  // client's header is passed on as it came.
  if (trace.getActiveSpan()) return { correlationId };
  const traceparent = req.get('traceparent');
  return traceparent !== undefined && HEADER_VALUE.test(traceparent)
    ? { correlationId, traceparent }
    : { correlationId };
}

function orderIdParam(req: Request): string {
  const id = req.params.id;
  if (typeof id !== 'string' || !UUID.test(id)) throw new HttpError(404, 'order not found');
  return id.toLowerCase();
}

function send(res: Response, result: HttpResult): void {
  if (result.replayed) res.set('Idempotent-Replayed', 'true');
  res.status(result.status).json(result.body);
}

export interface OrdersRouterDeps {
  pool: Pool;
  createOrder: CreateOrderHandler;
  transition: TransitionHandler;
  defaultMode: OrderMode;
  bodyLimit: string;
}

/** POST /orders, POST /orders/:id/pay|cancel, GET /orders/:id. Validation happens here. */
export function ordersRouter(deps: OrdersRouterDeps): Router {
  const router = Router();
  const json = jsonBody({
    limit: deps.bodyLimit,
    httpError: (status, message, issues) => new HttpError(status, message, issues),
  });

  router.post('/orders', ...json, async (req, res) => {
    const body = parse(createOrderBody, req.body, 'request body');
    const query = parse(modeQuery, req.query, 'query');
    const headers = eventHeaders(req, res);
    const idempotency = readIdempotencyKey(req);
    const mode = await resolveMode(deps.pool, body.mode ?? query.mode, deps.defaultMode);
    const result = await deps.createOrder.handle({
      userId: body.userId,
      sku: body.sku,
      quantity: body.quantity,
      mode,
      source: req.get('x-source') === 'traffic' ? 'traffic' : 'api',
      headers,
      ...(idempotency ? { idempotency } : {}),
    });
    send(res, result);
  });

  const transition = (action: TransitionAction) => async (req: Request, res: Response) => {
    const orderId = orderIdParam(req);
    const reason =
      action === 'cancel' ? parse(cancelBody, req.body, 'request body')?.reason : undefined;
    if (action === 'pay') parse(payBody, req.body, 'request body');
    const headers = eventHeaders(req, res);
    const idempotency = readIdempotencyKey(req);
    const result = await deps.transition.handle({
      orderId,
      action,
      headers,
      ...(reason === undefined ? {} : { reason }),
      ...(idempotency ? { idempotency } : {}),
    });
    send(res, result);
  };
  router.post('/orders/:id/pay', ...json, transition('pay'));
  router.post('/orders/:id/cancel', ...json, transition('cancel'));

  router.get('/orders/:id', async (req, res) => {
    const journey = await readOrder(deps.pool, orderIdParam(req));
    if (!journey) throw new HttpError(404, 'order not found');
    res.json(journey);
  });

  return router;
}
