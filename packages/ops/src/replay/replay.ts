import { outboxState, sendAcknowledged, toMessage, type OutboxRow } from '@outbox/core';
import type { Message, Producer } from 'kafkajs';
import type { Pool } from 'pg';

/** Which sent events to publish again. Every bound is optional; at least one is required. */
export interface ReplayRange {
  /** Outbox ids, inclusive. */
  fromId?: string;
  toId?: string;
  /** created_at bounds: since inclusive, until exclusive. */
  since?: Date;
  until?: Date;
  aggregateType?: string;
  aggregateId?: string;
}

export interface ReplayOptions {
  pool: Pool;
  /**
   * A connected producer built with `createPartitioner: relayPartitioner` (every
   * partition written to is checked for its acknowledgement); idempotent is best (no
   * duplicates of our own making). After a send whose outcome is unknown the replay
   * fails and the producer refuses to send again (ProducerRenewalRequiredError): its
   * sequence numbers may belong to a batch the broker appended. Replay with a new one.
   */
  producer: Producer;
  range: ReplayRange;
  /** Publish to this topic instead of each event's recorded one (e.g. a consumer's own). */
  topic?: string;
  /** Rows per produce request (default 500). */
  batchSize?: number;
  /** Count what would be published, publish nothing. */
  dryRun?: boolean;
}

export interface ReplayReport {
  /** Events published again (or that would be, in a dry run). */
  published: number;
  /** Per topic. */
  topics: Record<string, number>;
  firstId: string | null;
  lastId: string | null;
  /** Rows in the range not sent yet: the relay's job, not replayed. */
  skippedUnsent: number;
}

interface ReplayRow extends OutboxRow {
  topic: string;
}

function conditions(range: ReplayRange): { where: string; values: unknown[] } {
  const values: unknown[] = [];
  const parts: string[] = [];
  const add = (sql: string, value: unknown) => {
    values.push(value);
    parts.push(sql.replace('?', `$${values.length}`));
  };
  if (range.fromId !== undefined) add('id >= ?::bigint', range.fromId);
  if (range.toId !== undefined) add('id <= ?::bigint', range.toId);
  if (range.since) add('created_at >= ?::timestamptz', range.since);
  if (range.until) add('created_at < ?::timestamptz', range.until);
  if (range.aggregateType !== undefined) add('aggregate_type = ?', range.aggregateType);
  if (range.aggregateId !== undefined) add('aggregate_id = ?', range.aggregateId);
  if (parts.length === 0) {
    throw new Error('replay needs a range: --from-id/--to-id, --since/--until or an aggregate');
  }
  return { where: parts.join(' AND '), values };
}

/**
 * Publishes a range of already-sent outbox events again, for a consumer that lost
 * what it had applied (a restore from backup, a bug that dropped effects). Each event
 * goes out exactly as the relay sent it, same key and `event_id` header, in id order,
 * so per-aggregate order holds and every consumer's inbox recognises what it has
 * already applied: the ones that lost data apply it, the others skip duplicates.
 *
 * Read-only for the outbox (keyset pagination, no locks): it runs beside the relays.
 * Events of the range still pending are left to them. Only events still in the outbox
 * can be replayed (retention), and the inbox must remember as far back as the replay
 * goes, which is why inbox retention may never be shorter than outbox retention.
 */
export async function replay(options: ReplayOptions): Promise<ReplayReport> {
  const { where, values } = conditions(options.range);
  const batchSize = options.batchSize ?? 500;
  const report: ReplayReport = {
    published: 0,
    topics: {},
    firstId: null,
    lastId: null,
    skippedUnsent: 0,
  };
  const unsent = await options.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox WHERE ${where} AND ${outboxState('unsent')}`,
    values,
  );
  report.skippedUnsent = unsent.rows[0]?.n ?? 0;

  let after = '0';
  for (;;) {
    const { rows } = await options.pool.query<ReplayRow>(
      `SELECT id, aggregate_type, aggregate_id, event_type, event_version, payload::text AS payload,
              headers, created_at, attempts, topic
       FROM outbox
       WHERE ${where} AND sent_at IS NOT NULL AND id > $${values.length + 1}::bigint
       ORDER BY id LIMIT $${values.length + 2}`,
      [...values, after, batchSize],
    );
    if (rows.length === 0) break;
    const byTopic = new Map<string, Message[]>();
    for (const row of rows) {
      const topic = options.topic ?? row.topic;
      const message = toMessage(row);
      message.headers = { ...message.headers, replayed: 'true' };
      byTopic.set(topic, [...(byTopic.get(topic) ?? []), message]);
      report.topics[topic] = (report.topics[topic] ?? 0) + 1;
    }
    if (!options.dryRun) {
      // Checked, as the relay's: kafkajs resolves a send that skipped a partition, and
      // after an unknown outcome the next, different batch could be taken for the lost
      // one. Refusing (rather than renewing the producer here) leaves the choice of the
      // next producer to its owner; a replay is re-run, its duplicates caught by inboxes.
      await sendAcknowledged(
        options.producer,
        {
          acks: -1,
          topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
        },
        { requireChecked: true },
      );
    }
    report.published += rows.length;
    report.firstId ??= rows[0]!.id;
    report.lastId = rows.at(-1)!.id;
    after = report.lastId;
    if (rows.length < batchSize) break;
  }
  return report;
}
