import { outboxState, pendingStats } from '@outbox/core';
import type { Pool } from 'pg';
import { IdTail } from './id-tail.ts';
import { tailRows } from './sql.ts';

export interface OutboxGauges {
  pending: number;
  lagSeconds: number;
  failing: number;
  deadLettered: number;
}

/** pending, lag and dead-lettered read the partial indexes only (core's pendingStats); failing too. */
export async function outboxGauges(pool: Pool): Promise<OutboxGauges> {
  const stats = pendingStats();
  const [gauges, failing] = await Promise.all([
    pool.query<{ pending: number; dead_lettered: number; lag_seconds: number }>(
      stats.text,
      stats.values,
    ),
    // outbox_blocking_idx holds exactly the rows that failed and are not sent.
    pool.query<{ failing: number }>(
      `SELECT count(*)::int AS failing FROM outbox WHERE ${outboxState('failing')}`,
    ),
  ]);
  const g = gauges.rows[0];
  return {
    pending: g?.pending ?? 0,
    lagSeconds: g?.lag_seconds ?? 0,
    deadLettered: g?.dead_lettered ?? 0,
    failing: failing.rows[0]?.failing ?? 0,
  };
}

/**
 * How many outbox rows were marked sent, without count(*) over the table: every row
 * is counted once when the tail first sees it (by id, gaps included: IdTail), and
 * the sent ones are the rows seen minus those still unsent, which the two partial
 * indexes count (pending: outbox_pending_idx, dead-lettered: outbox_blocking_idx).
 * Read in one statement, so both sides come from one snapshot.
 *
 * Measured at 1M rows: an earlier version counted `sent_at IS NOT NULL` above the
 * oldest pending row, which 1,000 never-sent rows held down: 22 ms idle, 55 ms
 * under 100 orders/s, the most expensive part of the tick.
 */
export class PublishedCounter {
  private readonly tail = new IdTail();
  private seen = 0;
  total = 0;

  constructor(private readonly pool: Pool) {}

  /** Counts the rows from scratch (start and reset only). */
  async baseline(): Promise<void> {
    const { rows } = await this.pool.query<{ max_id: string; seen: number }>(
      'SELECT COALESCE(max(id), 0)::text AS max_id, count(*)::int AS seen FROM outbox',
    );
    this.seen = rows[0]?.seen ?? 0;
    this.tail.reset(rows[0]?.max_id ?? '0');
    await this.next();
  }

  async next(): Promise<number> {
    const { rows } = await this.pool.query<{ ids: string[]; unsent: number }>(
      `WITH n AS (${tailRows('outbox', 'id', '$3')}),
       w AS (SELECT GREATEST($1::bigint, COALESCE(max(id), 0)) AS w FROM n)
       SELECT COALESCE((SELECT array_agg(id::text ORDER BY id) FROM n), '{}') AS ids,
              ((SELECT count(*) FROM outbox
                 WHERE ${outboxState('pending')} AND id <= w.w)
             + (SELECT count(*) FROM outbox
                 WHERE ${outboxState('deadLettered')} AND id <= w.w))::int AS unsent
         FROM w`,
      [this.tail.watermark, this.tail.gapIds, 10_000],
    );
    const row = rows[0];
    if (!row) throw new Error('published count returned no row');
    this.tail.advance(row.ids);
    this.seen += row.ids.length;
    this.total = this.seen - row.unsent;
    return this.total;
  }
}
