import type { z } from 'zod';
import { InvalidEventError } from '../errors.ts';
import type { OutboxEvent } from '../outbox/event.ts';
import { eventSchemas, type EventType, type OrderEvent } from './schemas.ts';

type Schemas = Record<string, Record<number, z.ZodObject>>;

/** Upcasters: turn version N of a payload into version N+1. */
const upcasters: Record<
  string,
  Record<number, (payload: Record<string, unknown>) => Record<string, unknown>>
> = {
  OrderCreated: { 1: (p) => ({ ...p, source: 'unknown' }) },
};

export function latestVersion(
  eventType: string,
  schemas: Schemas = eventSchemas,
): number | undefined {
  const versions = Object.keys(schemas[eventType] ?? {}).map(Number);
  return versions.length ? Math.max(...versions) : undefined;
}

/**
 * The writer's validator: checks the payload against the schema of its version
 * (the latest when none is given) and stamps `eventVersion`, which the relay puts in
 * the `event_version` header. Unknown types and invalid payloads throw.
 */
export function validateEvent(event: OutboxEvent, schemas: Schemas = eventSchemas): OutboxEvent {
  const version = event.eventVersion ?? latestVersion(event.eventType, schemas);
  const schema = version === undefined ? undefined : schemas[event.eventType]?.[version];
  if (!schema) throw new InvalidEventError(`no schema for ${event.eventType} v${version ?? '?'}`);
  const parsed = schema.safeParse(event.payload);
  if (!parsed.success) {
    throw new InvalidEventError(
      `${event.eventType} v${version} payload is invalid: ${parsed.error.message}`,
    );
  }
  return { ...event, eventVersion: version, payload: parsed.data };
}

export class UnknownEventError extends InvalidEventError {}

/**
 * The consumer's reader: parses a payload of any known version and upcasts it to the
 * latest version this consumer knows. An event newer than the consumer knows is read
 * with its latest schema, which ignores added fields (zod objects strip unknown keys):
 * that is what keeps an old consumer working when producers move to v2.
 */
export function readEvent(
  eventType: string,
  version: number,
  payload: unknown,
  schemas: Schemas = eventSchemas,
): OrderEvent {
  const latest = latestVersion(eventType, schemas);
  if (latest === undefined) throw new UnknownEventError(`unknown event type ${eventType}`);
  let current = payload as Record<string, unknown>;
  let v = Math.min(version, latest);
  const initial = schemas[eventType]?.[v];
  if (!initial) throw new UnknownEventError(`unknown version ${version} of ${eventType}`);
  const first = initial.safeParse(current);
  if (!first.success)
    throw new InvalidEventError(
      `${eventType} v${version} payload is invalid: ${first.error.message}`,
    );
  current = first.data as Record<string, unknown>;
  while (v < latest) {
    const up = upcasters[eventType]?.[v];
    if (!up) throw new UnknownEventError(`no upcaster from ${eventType} v${v}`);
    current = up(current);
    v += 1;
  }
  const final = schemas[eventType]?.[latest]?.parse(current);
  return { eventType, payload: final } as OrderEvent;
}

export const isEventType = (t: string): t is EventType => Object.hasOwn(eventSchemas, t);
