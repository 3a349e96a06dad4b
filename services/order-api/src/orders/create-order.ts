import { randomUUID } from 'node:crypto';
import type { OrderCreated } from '@outbox/lab';
import type { OrderMode } from '../config.ts';
import { HttpError } from '../http/errors.ts';
import type { HttpResult, IdempotencyKey } from '../http/idempotency.ts';
import type { ApiMetrics } from '../metrics.ts';
import { commitWithEvent, type OrderDeps } from './commit.ts';

/** A validated POST /orders. */
export interface CreateOrderCommand {
  userId: number;
  sku: string;
  quantity: number;
  mode: OrderMode;
  source: OrderCreated['source'];
  /** Copied into the event's Kafka headers: correlationId, traceparent. */
  headers: Record<string, string>;
  idempotency?: IdempotencyKey;
}

/**
 * The seed's CreateOrderHandler: the order row (seq 1, status 'created') and its
 * OrderCreated (latest schema version, v2) go out together, by the order's mode.
 */
export class CreateOrderHandler {
  constructor(private readonly deps: OrderDeps & { metrics: ApiMetrics }) {}

  async handle(cmd: CreateOrderCommand): Promise<HttpResult> {
    const orderId = randomUUID();
    const payload: OrderCreated = {
      orderId,
      userId: cmd.userId,
      sku: cmd.sku,
      quantity: cmd.quantity,
      seq: 1,
      source: cmd.source,
    };
    const { result, committed } = await commitWithEvent(this.deps, cmd.idempotency, async (c) => {
      // INSERT … SELECT FROM inventory: the sku check and the write in one statement,
      // so a sku deleted meanwhile cannot slip between a check and the insert.
      const inserted = await c.query(
        `INSERT INTO orders (id, user_id, sku, quantity, status, seq, mode)
         SELECT $1, $2, i.sku, $4, 'created', 1, $5 FROM inventory i WHERE i.sku = $3`,
        [orderId, cmd.userId, cmd.sku, cmd.quantity, cmd.mode],
      );
      if (inserted.rowCount !== 1) throw new HttpError(422, 'unknown sku', { sku: cmd.sku });
      return {
        orderId,
        mode: cmd.mode,
        status: 201,
        body: { orderId, mode: cmd.mode },
        event: {
          aggregateType: 'order',
          aggregateId: orderId,
          eventType: 'OrderCreated',
          payload,
          headers: cmd.headers,
        },
      };
    });
    if (committed) this.deps.metrics.ordersCreated.inc({ mode: cmd.mode });
    return result;
  }
}
