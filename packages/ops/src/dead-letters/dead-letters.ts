import { outboxState, requeueQuery } from '@outbox/core';
import type { Pool } from 'pg';

export interface DeadLetteredEvent {
  id: string;
  aggregateType: string;
  aggregateId: string;
  eventType: string;
  attempts: number;
  error: string | null;
  deadLetteredAt: Date;
}

/** Outbox events that reached the attempt cap, oldest first. */
export async function listDeadLetters(pool: Pool, limit = 100): Promise<DeadLetteredEvent[]> {
  const { rows } = await pool.query<DeadLetteredEvent>(
    `SELECT id, aggregate_type AS "aggregateType", aggregate_id AS "aggregateId",
            event_type AS "eventType", attempts, error, dead_lettered_at AS "deadLetteredAt"
     FROM outbox WHERE ${outboxState('deadLettered')}
     ORDER BY id LIMIT $1`,
    [limit],
  );
  return rows;
}

/**
 * Puts dead-lettered events back in the queue (attempts 0, due now); `all` takes every
 * one. Returns the ids requeued. Fix the cause first, or they come back after maxAttempts.
 */
export async function requeueDeadLetters(pool: Pool, ids: string[] | 'all'): Promise<string[]> {
  const wanted =
    ids === 'all'
      ? (
          await pool.query<{ id: string }>(
            `SELECT id FROM outbox WHERE ${outboxState('deadLettered')}`,
          )
        ).rows.map((r) => r.id)
      : ids;
  if (wanted.length === 0) return [];
  const { rows } = await pool.query<{ id: string }>(requeueQuery(wanted));
  return rows.map((r) => r.id);
}
