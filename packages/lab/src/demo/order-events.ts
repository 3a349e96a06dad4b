import { EventRegistry, type EventSchemas, type OutboxEvent } from '@outbox/core';
import { z } from 'zod';

/**
 * Versioned schemas of the demo's order events. A version is never edited once
 * shipped: a change is a new version, checked for compatibility with the previous
 * one (see compatibility.ts) and upcast on the consumer side (see registry.ts).
 */
const orderId = z.uuid();
const seq = z.number().int().positive();

export const OrderCreatedV1 = z.object({
  orderId,
  userId: z.number().int().positive(),
  sku: z.string().min(1),
  quantity: z.number().int().positive(),
  seq,
});

/** v2 adds where the order came from; v1 events are upcast with `source: 'unknown'`. */
export const OrderCreatedV2 = OrderCreatedV1.extend({
  source: z.enum(['api', 'traffic', 'unknown']),
});

export const OrderPaidV1 = z.object({ orderId, seq, paidAt: z.iso.datetime() });

export const OrderCancelledV1 = z.object({ orderId, seq, reason: z.string().optional() });

/** eventType → version → schema. The highest version is what producers write. */
export const eventSchemas = {
  OrderCreated: { 1: OrderCreatedV1, 2: OrderCreatedV2 },
  OrderPaid: { 1: OrderPaidV1 },
  OrderCancelled: { 1: OrderCancelledV1 },
} as const satisfies EventSchemas;

export type EventType = keyof typeof eventSchemas;
export type OrderCreated = z.infer<typeof OrderCreatedV2>;
export type OrderPaid = z.infer<typeof OrderPaidV1>;
export type OrderCancelled = z.infer<typeof OrderCancelledV1>;
export type OrderEvent =
  | { eventType: 'OrderCreated'; payload: OrderCreated }
  | { eventType: 'OrderPaid'; payload: OrderPaid }
  | { eventType: 'OrderCancelled'; payload: OrderCancelled };

/** The order events' registry: v1 OrderCreated is upcast with `source: 'unknown'`. */
const orderUpcasters = {
  OrderCreated: { 1: (p: Record<string, unknown>) => ({ ...p, source: 'unknown' }) },
};
export const orderEvents = new EventRegistry(eventSchemas, orderUpcasters);

/**
 * The writer's validator for order events, or for `schemas` (a test's older registry).
 * See EventRegistry.validate.
 */
export function validateEvent(event: OutboxEvent, schemas?: EventSchemas): OutboxEvent {
  return (schemas ? new EventRegistry(schemas) : orderEvents).validate(event);
}

/** Reads an order event of any known version as the latest (EventRegistry.read). */
export function readEvent(
  eventType: string,
  version: number,
  payload: unknown,
  schemas?: EventSchemas,
): OrderEvent {
  const registry = schemas ? new EventRegistry(schemas, orderUpcasters) : orderEvents;
  return registry.read(eventType, version, payload) as OrderEvent;
}

export const isEventType = (t: string): t is EventType => orderEvents.isEventType(t);
export const latestVersion = (eventType: string): number | undefined =>
  orderEvents.latestVersion(eventType);
