import { InvalidEventError, UnknownEventError } from '@outbox/core';
import { readEvent, type OrderEvent } from '@outbox/lab';
import type { IHeaders, KafkaMessage } from 'kafkajs';

/** Why a message went to the dead-letter topic (the `dlq_reason` header and metric label). */
export type DeadLetterReason =
  | 'missing_event_id'
  | 'missing_aggregate_id'
  | 'invalid_headers'
  | 'invalid_json'
  | 'unknown_event_type'
  | 'invalid_payload'
  | 'handler_error';

/** A message this consumer can never handle: retrying it would fail the same way. */
export class PoisonMessageError extends Error {
  constructor(
    readonly reason: DeadLetterReason,
    message: string,
  ) {
    super(message);
    this.name = 'PoisonMessageError';
  }
}

/** A message read and upcast to the latest version this consumer knows. */
export interface DecodedEvent {
  eventId: string;
  eventType: string;
  eventVersion: number;
  aggregateId: string;
  event: OrderEvent;
  seq: number | null;
}

/** Header values as strings (kafkajs gives Buffers, possibly arrays). */
export function headerText(headers: IHeaders | undefined, name: string): string | undefined {
  const raw = headers?.[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || value === null) return undefined;
  const text = value.toString();
  return text === '' ? undefined : text;
}

/**
 * Reads the relay's message shape (ids in headers, the payload as JSON in the value)
 * through the lab's readEvent, so a v1 OrderCreated arrives here as v2. Throws
 * PoisonMessageError naming what is wrong.
 */
export function decodeMessage(message: KafkaMessage): DecodedEvent {
  const { headers } = message;
  const eventId = headerText(headers, 'event_id');
  if (!eventId) throw new PoisonMessageError('missing_event_id', 'no event_id header');
  const eventType = headerText(headers, 'event_type');
  if (!eventType) throw new PoisonMessageError('unknown_event_type', 'no event_type header');
  const versionText = headerText(headers, 'event_version') ?? '1';
  const eventVersion = Number(versionText);
  if (!Number.isInteger(eventVersion) || eventVersion < 1)
    throw new PoisonMessageError(
      'invalid_headers',
      `event_version "${versionText}" is not a positive integer`,
    );
  const aggregateId = headerText(headers, 'aggregate_id') ?? message.key?.toString();
  if (!aggregateId)
    throw new PoisonMessageError('missing_aggregate_id', 'no aggregate_id header nor key');

  let payload: unknown;
  try {
    payload = JSON.parse(message.value?.toString() ?? '');
  } catch (error) {
    throw new PoisonMessageError('invalid_json', `value is not JSON: ${(error as Error).message}`);
  }
  let event: OrderEvent;
  try {
    event = readEvent(eventType, eventVersion, payload);
  } catch (error) {
    if (error instanceof UnknownEventError)
      throw new PoisonMessageError('unknown_event_type', error.message);
    if (error instanceof InvalidEventError)
      throw new PoisonMessageError('invalid_payload', error.message);
    throw new PoisonMessageError('invalid_payload', String(error));
  }
  return { eventId, eventType, eventVersion, aggregateId, event, seq: event.payload.seq };
}
