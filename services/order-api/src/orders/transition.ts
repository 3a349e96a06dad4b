import type { OutboxEvent } from '@outbox/core';
import type { OrderCancelled, OrderPaid } from '@outbox/lab';
import type { OrderMode } from '../config.ts';
import { HttpError } from '../http/errors.ts';
import type { HttpResult, IdempotencyKey } from '../http/idempotency.ts';
import { commitWithEvent, type OrderDeps } from './commit.ts';

export type OrderStatus = 'created' | 'paid' | 'cancelled';
export type TransitionAction = 'pay' | 'cancel';

/** The order state machine: action → status it leads to, and the statuses it may leave. */
const transitions: Record<TransitionAction, { to: OrderStatus; from: readonly OrderStatus[] }> = {
  pay: { to: 'paid', from: ['created'] },
  cancel: { to: 'cancelled', from: ['created', 'paid'] },
};

/** A validated POST /orders/:id/pay or /cancel. */
export interface TransitionCommand {
  orderId: string;
  action: TransitionAction;
  reason?: string;
  headers: Record<string, string>;
  idempotency?: IdempotencyKey;
}

/**
 * Pays or cancels an order. The row is locked (FOR UPDATE) so concurrent
 * transitions of one order queue up; each bumps `orders.seq` and its event carries
 * that seq, so consumers can check FIFO per aggregate. Events go out by the order's
 * own mode, chosen when it was created.
 */
export class TransitionHandler {
  constructor(private readonly deps: OrderDeps) {}

  async handle(cmd: TransitionCommand): Promise<HttpResult> {
    const rule = transitions[cmd.action];
    const { result } = await commitWithEvent(this.deps, cmd.idempotency, async (c) => {
      const { rows } = await c.query<{ status: OrderStatus; mode: OrderMode }>(
        'SELECT status, mode FROM orders WHERE id = $1 FOR UPDATE',
        [cmd.orderId],
      );
      const order = rows[0];
      if (!order) throw new HttpError(404, 'order not found', { orderId: cmd.orderId });
      if (!rule.from.includes(order.status)) {
        throw new HttpError(409, `cannot ${cmd.action} an order that is ${order.status}`, {
          orderId: cmd.orderId,
          status: order.status,
          allowedFrom: rule.from,
        });
      }
      const updated = await c.query<{ seq: number }>(
        `UPDATE orders SET status = $2, seq = seq + 1, updated_at = now()
         WHERE id = $1 RETURNING seq`,
        [cmd.orderId, rule.to],
      );
      const seq = updated.rows[0]?.seq as number;
      return {
        orderId: cmd.orderId,
        mode: order.mode,
        status: 200,
        body: { orderId: cmd.orderId, status: rule.to, seq, mode: order.mode },
        event: this.event(cmd, seq),
      };
    });
    return result;
  }

  private event(cmd: TransitionCommand, seq: number): OutboxEvent {
    const base = { aggregateType: 'order', aggregateId: cmd.orderId, headers: cmd.headers };
    if (cmd.action === 'pay') {
      const payload: OrderPaid = { orderId: cmd.orderId, seq, paidAt: new Date().toISOString() };
      return { ...base, eventType: 'OrderPaid', payload };
    }
    const payload: OrderCancelled = {
      orderId: cmd.orderId,
      seq,
      ...(cmd.reason === undefined ? {} : { reason: cmd.reason }),
    };
    return { ...base, eventType: 'OrderCancelled', payload };
  }
}
