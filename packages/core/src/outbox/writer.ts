import type { ClientBase, Pool } from 'pg';
import { NotInTransactionError } from '../errors.ts';
import { DEFAULT_MAX_PAYLOAD_BYTES, serializeEvent, type OutboxEvent } from './event.ts';

/** Checks an event before it is written; e.g. the schema registry's validator. */
export type EventValidator = (event: OutboxEvent) => OutboxEvent;

export interface OutboxWriterOptions {
  /** Over this many bytes of JSON the append fails (default 1 MiB). */
  maxPayloadBytes?: number;
  /** Run on every event before serialisation; may add eventVersion or throw. */
  validate?: EventValidator;
}

export interface AppendedEvent {
  id: string;
}

/**
 * Writes events to the outbox inside the caller's transaction: the seed's
 * OutboxWriter. Both methods refuse to run outside BEGIN … COMMIT.
 */
export class OutboxWriter {
  private readonly maxPayloadBytes: number;
  private readonly validate: EventValidator | undefined;

  constructor(options: OutboxWriterOptions = {}) {
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.validate = options.validate;
  }

  /** Appends one event; returns its outbox id (which is also its event_id). */
  async append(client: ClientBase | Pool, event: OutboxEvent): Promise<AppendedEvent> {
    const [appended] = await this.appendBatch(client, [event]);
    return appended as AppendedEvent;
  }

  /**
   * Appends several events in one INSERT, in order (ids ascend in array order, so
   * events of one aggregate keep their order).
   */
  async appendBatch(client: ClientBase | Pool, events: OutboxEvent[]): Promise<AppendedEvent[]> {
    // The server reports its transaction state with every ReadyForQuery ('I' idle,
    // 'T' in a transaction block, 'E' failed block); pg exposes it. A Pool has none:
    // each query would autocommit on its own.
    if (!('getTransactionStatus' in client) || client.getTransactionStatus() !== 'T') {
      throw new NotInTransactionError();
    }
    if (events.length === 0) return [];
    const rows = events.map((event) =>
      serializeEvent(this.validate ? this.validate(event) : event, this.maxPayloadBytes),
    );
    const result = await client.query<{ id: string }>(
      `INSERT INTO outbox (aggregate_type, aggregate_id, event_type, event_version, payload, headers)
       SELECT t.aggregate_type, t.aggregate_id, t.event_type, t.event_version, t.payload::jsonb, t.headers::jsonb
       FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[])
            WITH ORDINALITY AS t(aggregate_type, aggregate_id, event_type, event_version, payload, headers, n)
       ORDER BY t.n
       RETURNING id`,
      [
        rows.map((r) => r.aggregateType),
        rows.map((r) => r.aggregateId),
        rows.map((r) => r.eventType),
        rows.map((r) => r.eventVersion),
        rows.map((r) => r.payloadJson),
        rows.map((r) => r.headersJson),
      ],
    );
    return result.rows.map((r) => ({ id: r.id }));
  }
}
