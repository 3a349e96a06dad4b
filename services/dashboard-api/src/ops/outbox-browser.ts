import { outboxState } from '@outbox/core';
import type { Pool } from 'pg';
import type { OutboxQuery, OutboxRowView, OutboxStatus, OutboxPage } from '../contract.ts';

export interface OutboxDbRow {
  id: string;
  aggregate_type: string;
  aggregate_id: string;
  event_type: string;
  event_version: number;
  payload: unknown;
  headers: Record<string, unknown> | null;
  created_at: Date;
  sent_at: Date | null;
  attempts: number;
  error: string | null;
  next_attempt_at: Date;
  dead_lettered_at: Date | null;
  topic: string | null;
  kafka_partition: number | null;
  kafka_offset: string | null;
  shard: number;
}

export const outboxColumns = `id::text AS id, aggregate_type, aggregate_id, event_type, event_version,
  payload, headers, created_at, sent_at, attempts, error, next_attempt_at, dead_lettered_at, topic,
  kafka_partition, kafka_offset::text AS kafka_offset, shard`;

/** A row's status as the browser filters it; the same conditions as `statusCondition`. */
export function statusOf(
  r: Pick<OutboxDbRow, 'sent_at' | 'dead_lettered_at' | 'attempts'>,
): OutboxStatus {
  if (r.sent_at) return 'sent';
  if (r.dead_lettered_at) return 'dead';
  return r.attempts > 0 ? 'failed' : 'pending';
}

// Each condition matches a partial index where one exists: pending → outbox_pending_idx,
// failed/dead → outbox_blocking_idx (the rare failing rows).
const statusCondition: Record<OutboxStatus, string> = {
  pending: `${outboxState('pending')} AND attempts = 0`,
  failed: outboxState('failing'),
  dead: outboxState('deadLettered'),
  sent: outboxState('sent'),
};

export function toOutboxView(r: OutboxDbRow): OutboxRowView {
  return {
    id: r.id,
    aggregateType: r.aggregate_type,
    aggregateId: r.aggregate_id,
    eventType: r.event_type,
    eventVersion: r.event_version,
    payload: r.payload,
    headers: r.headers ?? {},
    createdAt: r.created_at.toISOString(),
    sentAt: r.sent_at?.toISOString() ?? null,
    attempts: r.attempts,
    error: r.error,
    nextAttemptAt: r.next_attempt_at.toISOString(),
    deadLetteredAt: r.dead_lettered_at?.toISOString() ?? null,
    topic: r.topic,
    kafkaPartition: r.kafka_partition,
    kafkaOffset: r.kafka_offset,
    shard: r.shard,
    status: statusOf(r),
  };
}

/**
 * One page of outbox rows, newest first, keyset-paged by id (`cursor` = the last id
 * of the previous page): the cost of a page does not grow with how deep it is.
 *
 * An aggregate filter goes through outbox_aggregate_idx (aggregate_type,
 * aggregate_id): the few aggregate types are found by a loose index scan (a recursive
 * walk of that index) so the filter needs no type from the client.
 */
export async function browseOutbox(
  pool: Pool,
  q: OutboxQuery & { limit: number },
): Promise<OutboxPage> {
  const where: string[] = [];
  const values: unknown[] = [];
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  let types = '';
  if (q.status) where.push(statusCondition[q.status]);
  if (q.cursor) where.push(`id < ${param(q.cursor)}::bigint`);
  if (q.eventType) where.push(`event_type = ${param(q.eventType)}`);
  if (q.aggregateId) {
    types = `WITH RECURSIVE t AS (
      (SELECT aggregate_type AS ty FROM outbox ORDER BY aggregate_type LIMIT 1)
      UNION ALL
      SELECT (SELECT aggregate_type FROM outbox WHERE aggregate_type > t.ty
               ORDER BY aggregate_type LIMIT 1) FROM t WHERE t.ty IS NOT NULL) `;
    where.push(
      `(aggregate_type, aggregate_id) IN (SELECT ty, ${param(q.aggregateId)}::text FROM t WHERE ty IS NOT NULL)`,
    );
  }
  const limit = param(q.limit + 1);
  const { rows } = await pool.query<OutboxDbRow>(
    `${types}SELECT ${outboxColumns} FROM outbox
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY outbox.id DESC LIMIT ${limit}`,
    values,
  );
  const page = rows.slice(0, q.limit);
  return {
    rows: page.map(toOutboxView),
    nextCursor: rows.length > q.limit ? (page[page.length - 1]?.id ?? null) : null,
  };
}
