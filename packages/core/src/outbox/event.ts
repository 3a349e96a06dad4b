import { unstorableText } from '../db/text.ts';
import { InvalidEventError, PayloadNotSerializableError, PayloadTooLargeError } from '../errors.ts';

/** An event to append to the outbox, in the seed's vocabulary. */
export interface OutboxEvent {
  /** 'order', 'user', …: chooses the topic. */
  aggregateType: string;
  /** Id of the entity; also the Kafka key, so one aggregate stays on one partition. */
  aggregateId: string;
  /** 'OrderCreated', … */
  eventType: string;
  /** Schema version of the payload, written to the `event_version` header. Default 1. */
  eventVersion?: number;
  payload: unknown;
  /** correlation id, trace context (traceparent), …: copied into Kafka headers. */
  headers?: Record<string, string>;
}

/**
 * Kafka's default `message.max.bytes` is 1 MiB (the seed's "> 1MB — Kafka refuses").
 * Checked at append time, so the business transaction fails instead of a poison row.
 */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

/** A validated event with its JSON already produced, ready to insert. */
export interface SerializedEvent {
  aggregateType: string;
  aggregateId: string;
  eventType: string;
  eventVersion: number;
  payloadJson: string;
  headersJson: string;
}

function toJson(value: unknown, what: string): string {
  let json: string | undefined;
  // Every key and string on the way: JSONB cannot store NUL or an unpaired
  // surrogate, and PostgreSQL's error for them would be a 500 far from the cause.
  // (A search of the JSON text for "\\u0000" also matched an escaped backslash.)
  let unstorable: string | undefined;
  const check = (key: string, v: unknown): unknown => {
    unstorable ??= unstorableText(key) ?? (typeof v === 'string' ? unstorableText(v) : undefined);
    return v;
  };
  try {
    json = JSON.stringify(value, check);
  } catch (cause) {
    throw new PayloadNotSerializableError(`${what} cannot be serialised to JSON`, { cause });
  }
  if (json === undefined) {
    throw new PayloadNotSerializableError(
      `${what} serialises to nothing (undefined or a function)`,
    );
  }
  if (unstorable) {
    throw new PayloadNotSerializableError(`${what} ${unstorable}`);
  }
  return json;
}

function requireText(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidEventError(`${field} must be a non-empty string`);
  }
  const unstorable = unstorableText(value);
  if (unstorable) throw new InvalidEventError(`${field} ${unstorable}`);
  return value;
}

/** Validates an event and serialises it; throws a typed error, never writes. */
export function serializeEvent(event: OutboxEvent, maxPayloadBytes: number): SerializedEvent {
  const eventVersion = event.eventVersion ?? 1;
  if (!Number.isInteger(eventVersion) || eventVersion < 1) {
    throw new InvalidEventError('eventVersion must be a positive integer');
  }
  const headers = event.headers ?? {};
  for (const [key, value] of Object.entries(headers)) {
    if (typeof value !== 'string') throw new InvalidEventError(`header "${key}" must be a string`);
  }
  const payloadJson = toJson(event.payload, 'payload');
  const bytes = Buffer.byteLength(payloadJson, 'utf8');
  if (bytes > maxPayloadBytes) throw new PayloadTooLargeError(bytes, maxPayloadBytes);
  return {
    aggregateType: requireText(event.aggregateType, 'aggregateType'),
    aggregateId: requireText(event.aggregateId, 'aggregateId'),
    eventType: requireText(event.eventType, 'eventType'),
    eventVersion,
    payloadJson,
    headersJson: toJson(headers, 'headers'),
  };
}
