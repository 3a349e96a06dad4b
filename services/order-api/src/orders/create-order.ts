import { randomUUID } from 'node:crypto';
import type { OrderCreated } from '@outbox/lab';
import type { OrderMode, WritePath } from '../config.ts';
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
  constructor(private readonly deps: OrderDeps & { metrics: ApiMetrics; writePath: WritePath }) {}

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
    const event = {
      aggregateType: 'order',
      aggregateId: orderId,
      eventType: 'OrderCreated',
      payload,
      headers: cmd.headers,
    };
    // INSERT … SELECT FROM inventory: the sku check and the write in one statement,
    // so a sku deleted meanwhile cannot slip between a check and the insert.
    const insertOrder = {
      text: `INSERT INTO orders (id, user_id, sku, quantity, status, seq, mode)
             SELECT $1, $2, i.sku, $4, 'created', 1, $5 FROM inventory i WHERE i.sku = $3
             RETURNING id`,
      values: [orderId, cmd.userId, cmd.sku, cmd.quantity, cmd.mode],
    };
    const unknownSku = () => new HttpError(422, 'unknown sku', { sku: cmd.sku });
    if (cmd.mode === 'outbox' && !cmd.idempotency && this.deps.writePath === 'statement') {
      // One round trip: the order and its event in one statement (see WRITE_PATH).
      const { changed, events } = await this.deps.writer.appendWith(this.deps.pool, insertOrder, [
        event,
      ]);
      if (changed !== 1) throw unknownSku();
      this.deps.metrics.ordersCreated.inc({ mode: cmd.mode });
      return { status: 201, body: { orderId, mode: cmd.mode, eventId: events[0]?.id } };
    }
    const { result, committed } = await commitWithEvent(this.deps, cmd.idempotency, async (c) => {
      const inserted = await c.query(insertOrder.text, insertOrder.values);
      if (inserted.rowCount !== 1) throw unknownSku();
      return { orderId, mode: cmd.mode, status: 201, body: { orderId, mode: cmd.mode }, event };
    });
    if (committed) this.deps.metrics.ordersCreated.inc({ mode: cmd.mode });
    return result;
  }
}
