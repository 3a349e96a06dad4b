import type { Message, ProducerBatch, RecordMetadata } from 'kafkajs';
import { acknowledgedPositions, assignedPartition, type LogPosition } from './acknowledgement.ts';
import type { OutboxRow } from './sql.ts';

/** A claimed row with the topic it goes to. */
export interface RoutedRow {
  row: OutboxRow;
  topic: string;
}

/**
 * Kafka message for an outbox row: key = aggregate_id (FIFO per aggregate), ids in headers.
 * `traceHeaders` (the publish span's context) replace the stored trace headers.
 */
export function toMessage(row: OutboxRow, traceHeaders: Record<string, string> = {}): Message {
  return {
    key: row.aggregate_id,
    value: row.payload,
    headers: {
      ...(row.headers ?? {}),
      ...traceHeaders,
      event_id: row.id,
      event_type: row.event_type,
      event_version: String(row.event_version),
      aggregate_type: row.aggregate_type,
      aggregate_id: row.aggregate_id,
    },
  };
}

// The message each routed row was last produced as: the partitioner's choice for it can
// be looked up after a refused send (`partitionOf`). Weak, so nothing is kept.
const sentAs = new WeakMap<RoutedRow, Message>();

/**
 * The partition the row went to in its last send, when the producer uses
 * `relayPartitioner` and the send got as far as choosing one; otherwise undefined.
 */
export function partitionOf(routed: RoutedRow): number | undefined {
  const message = sentAs.get(routed);
  return message && assignedPartition(message)?.partition;
}

// Where the broker wrote each row of an acknowledged send (`rememberPositions`). Weak too.
const writtenAt = new WeakMap<RoutedRow, LogPosition>();

/** Records, from a send's acknowledgements, the partition and offset of each of its rows. */
export function rememberPositions(rows: RoutedRow[], acknowledged: RecordMetadata[]): void {
  const messages = rows.map((r) => sentAs.get(r));
  const known = messages.filter((m): m is Message => m !== undefined);
  if (known.length !== rows.length) return; // not sent through rowsBatch: nothing to say
  acknowledgedPositions(known, acknowledged).forEach((position, i) => {
    if (position) writtenAt.set(rows[i]!, position);
  });
}

/**
 * The partition and offset the broker acknowledged for the row's last send, when the
 * producer uses `relayPartitioner` and the send was acknowledged; otherwise undefined.
 */
export function positionOf(routed: RoutedRow): LogPosition | undefined {
  return writtenAt.get(routed);
}

/**
 * The producer acks the relay asks for. 'all' (the default): every in-sync replica has
 * the batch before the broker answers, so with min.insync.replicas ≥ 2 an acknowledged
 * batch survives the leader's death. 1: the leader alone has it when it answers. UNSAFE,
 * kept for the lab's lesson only: the relay marks the rows sent on that answer, and if
 * the leader dies before its followers copied the batch, the new leader never had it —
 * events lost after the outbox marked them sent, and nothing ever retries them. With 1
 * the outbox's guarantee ("every committed event reaches the topic") no longer holds.
 */
export type RelayAcks = 'all' | 1;

/**
 * The produce request for the rows, acks = all unless told otherwise (send it with
 * `sendAcknowledged`, which resolves once the broker acknowledged every partition).
 * Messages are grouped per topic in id order; kafkajs keeps that order per partition,
 * and one send is in flight at a time, so per-key order holds.
 */
export function rowsBatch(
  rows: RoutedRow[],
  timeoutMs: number,
  traceHeadersOf: (routed: RoutedRow) => Record<string, string> = () => ({}),
  acks: RelayAcks = 'all',
): ProducerBatch {
  const byTopic = new Map<string, Message[]>();
  for (const routed of rows) {
    const list = byTopic.get(routed.topic) ?? [];
    const message = toMessage(routed.row, traceHeadersOf(routed));
    sentAs.set(routed, message);
    list.push(message);
    byTopic.set(routed.topic, list);
  }
  return {
    acks: acks === 'all' ? -1 : 1,
    timeout: timeoutMs,
    topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
  };
}

// Broker answers that concern the message or its topic, not the connection: retrying
// the same row will fail the same way, so they count against the row.
const ROW_ERROR_TYPES = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_TOPIC_EXCEPTION',
  'INVALID_RECORD',
  'CORRUPT_MESSAGE',
  'POLICY_VIOLATION',
  'INVALID_REQUIRED_ACKS',
]);

// A topic that does not exist yet or that the client may not write yet: both pass when
// the topic is created or the ACL granted, so they are Kafka's, not the row's (counted
// against the row, a topic created a few minutes late dead-lettered every event for it).
const TOPIC_UNAVAILABLE_ERROR_TYPES = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'TOPIC_AUTHORIZATION_FAILED',
]);

function hasErrorType(error: unknown, types: Set<string>): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 6; depth += 1) {
    const err = e as {
      type?: string;
      cause?: unknown;
      originalError?: unknown;
      errors?: unknown[];
    };
    if (err.type && types.has(err.type)) return true;
    if (Array.isArray(err.errors) && err.errors.some((inner) => hasErrorType(inner, types)))
      return true;
    e = err.originalError ?? err.cause;
  }
  return false;
}

/** Whether a produce error is the rows' fault (bad message or topic) rather than Kafka's. */
export function isRowError(error: unknown): boolean {
  return hasErrorType(error, ROW_ERROR_TYPES) && !isTopicUnavailableError(error);
}

/** Whether a produce error says a topic is missing or not writable (yet): Kafka's. */
export function isTopicUnavailableError(error: unknown): boolean {
  return hasErrorType(error, TOPIC_UNAVAILABLE_ERROR_TYPES);
}

export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const type = (error as { type?: string }).type;
    return type ? `${type}: ${error.message}` : `${error.name}: ${error.message}`;
  }
  return String(error);
}
