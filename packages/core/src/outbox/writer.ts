import type { Span } from '@opentelemetry/api';
import type { ClientBase, Pool } from 'pg';
import { NotInTransactionError } from '../errors.ts';
import { ATTR, inSpan, traceHeaders } from '../tracing.ts';
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

/** One data-modifying statement with RETURNING, for `appendWith`. */
export interface ChangeStatement {
  text: string;
  values: unknown[];
}

/** What `appendWith` did: rows the change returned, and the events appended (none if 0). */
export interface AppendedWith {
  changed: number;
  events: AppendedEvent[];
}

const INSERT_COLUMNS = 'aggregate_type, aggregate_id, event_type, event_version, payload, headers';

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
    return inSpan('outbox.append', eventAttributes(events), async (span) => {
      const { select, values } = this.eventRows(events, 1);
      const result = await client.query<{ id: string }>(
        `INSERT INTO outbox (${INSERT_COLUMNS}) ${select} ORDER BY t.n RETURNING id`,
        values,
      );
      const appended = result.rows.map((r) => ({ id: r.id }));
      setEventIds(span, appended);
      return appended;
    });
  }

  /**
   * The business change and its events in ONE statement, hence one round trip and one
   * implicit transaction: `WITH change AS (<change>) INSERT INTO outbox …`. The events
   * are appended only if the change touched at least one row (an INSERT … SELECT that
   * found no row appends nothing), and both commit or neither does, as with `append`
   * inside BEGIN … COMMIT. For callers whose change is one data-modifying statement;
   * `append` inside `withTransaction` stays the way for anything else.
   *
   * `change.text` must be an INSERT, UPDATE or DELETE with a RETURNING clause (a CTE
   * cannot be read otherwise) using `$1 … $n` for `change.values`; the events' own
   * parameters follow. Works on a Pool or a client, in or out of a transaction.
   *
   * Measured (bench --only api): order-api's POST /orders this way against BEGIN,
   * INSERT, INSERT, COMMIT: see packages/bench/RESULTS.md, API throughput.
   */
  async appendWith(
    client: ClientBase | Pool,
    change: ChangeStatement,
    events: OutboxEvent[],
  ): Promise<AppendedWith> {
    if (events.length === 0) throw new TypeError('appendWith needs at least one event');
    return inSpan('outbox.append', eventAttributes(events), async (span) => {
      const { select, values } = this.eventRows(events, change.values.length + 1);
      const result = await client.query<{ changed: number; ids: string[] }>(
        `WITH change AS (${change.text}),
         appended AS (
           INSERT INTO outbox (${INSERT_COLUMNS}) ${select}
           WHERE EXISTS (SELECT FROM change) ORDER BY t.n RETURNING id)
         SELECT (SELECT count(*) FROM change)::int AS changed,
                ARRAY(SELECT id::text FROM appended ORDER BY id) AS ids`,
        [...change.values, ...values],
      );
      const row = result.rows[0];
      const appended = (row?.ids ?? []).map((id) => ({ id }));
      setEventIds(span, appended);
      return { changed: row?.changed ?? 0, events: appended };
    });
  }

  /**
   * The events as one SELECT over unnest'ed arrays, parameters from `$first` on. Called
   * inside the `outbox.append` span: an event without a `traceparent` header of its own
   * gets that span's, so the relay's publish span continues the writer's trace.
   */
  private eventRows(events: OutboxEvent[], first: number): { select: string; values: unknown[] } {
    const trace = traceHeaders();
    const rows = events.map((event) =>
      serializeEvent(
        withTrace(this.validate ? this.validate(event) : event, trace),
        this.maxPayloadBytes,
      ),
    );
    const p = (i: number) => `$${first + i}`;
    return {
      select: `SELECT t.aggregate_type, t.aggregate_id, t.event_type, t.event_version, t.payload::jsonb, t.headers::jsonb
       FROM unnest(${p(0)}::text[], ${p(1)}::text[], ${p(2)}::text[], ${p(3)}::int[], ${p(4)}::text[], ${p(5)}::text[])
            WITH ORDINALITY AS t(aggregate_type, aggregate_id, event_type, event_version, payload, headers, n)`,
      values: [
        rows.map((r) => r.aggregateType),
        rows.map((r) => r.aggregateId),
        rows.map((r) => r.eventType),
        rows.map((r) => r.eventVersion),
        rows.map((r) => r.payloadJson),
        rows.map((r) => r.headersJson),
      ],
    };
  }
}

/** The event with the trace headers added, unless it carries a traceparent of its own. */
function withTrace(event: OutboxEvent, trace: Record<string, string>): OutboxEvent {
  if (trace.traceparent === undefined || event.headers?.traceparent !== undefined) return event;
  return { ...event, headers: { ...event.headers, ...trace } };
}

/** The `outbox.append` span's attributes: the event's, or the count for several. */
function eventAttributes(events: OutboxEvent[]): Record<string, string | number> {
  const [event] = events;
  if (events.length !== 1 || !event) return { 'outbox.event_count': events.length };
  // Only strings: the event is not validated yet, and a span must not throw.
  const text = (v: unknown): string => (typeof v === 'string' ? v : String(v));
  return {
    [ATTR.aggregateType]: text(event.aggregateType),
    [ATTR.aggregateId]: text(event.aggregateId),
    [ATTR.eventType]: text(event.eventType),
  };
}

/** The outbox ids (= event ids) once the INSERT returned them. */
function setEventIds(span: Span, appended: AppendedEvent[]): void {
  if (appended.length === 1) span.setAttribute(ATTR.eventId, appended[0]!.id);
  else if (appended.length > 1)
    span.setAttribute(
      'outbox.event_ids',
      appended.map((a) => a.id),
    );
}
