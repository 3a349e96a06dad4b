import { pendingStats } from '@outbox/core';
import type { Pool } from 'pg';

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
      `SELECT count(*)::int AS failing FROM outbox
        WHERE sent_at IS NULL AND attempts > 0 AND dead_lettered_at IS NULL`,
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
 * How many outbox rows were marked sent, without count(*) over the table.
 *
 * Below the oldest pending row that never failed, every row is settled (sent or
 * dead-lettered) and stays so: that prefix is counted once, as the frontier moves up.
 * Above it, the rows are counted on every tick: normally a handful, during an outage
 * the backlog (which pendingStats walks anyway). Not exact in two rare cases, fine for
 * a rate: a row committed below the frontier after it moved (a long writer
 * transaction) and a requeued dead letter are not counted when they are sent.
 */
export class PublishedCounter {
  private frontier = '0';
  private settled = 0;
  total = 0;

  constructor(private readonly pool: Pool) {}

  /** Counts the sent prefix from scratch (start and reset only). */
  async baseline(): Promise<void> {
    this.frontier = '0';
    this.settled = 0;
    await this.next();
  }

  async next(): Promise<number> {
    const { rows } = await this.pool.query<{ frontier: string; settled: number; above: number }>(
      `WITH f AS (
         SELECT GREATEST($1::bigint, COALESCE(
           (SELECT min(id) - 1 FROM outbox
             WHERE sent_at IS NULL AND dead_lettered_at IS NULL AND attempts = 0),
           (SELECT max(id) FROM outbox), 0)) AS frontier)
       SELECT f.frontier::text AS frontier,
              (SELECT count(*) FROM outbox o
                WHERE o.id > $1::bigint AND o.id <= f.frontier AND o.sent_at IS NOT NULL)::int AS settled,
              (SELECT count(*) FROM outbox o
                WHERE o.id > f.frontier AND o.sent_at IS NOT NULL)::int AS above
         FROM f`,
      [this.frontier],
    );
    const row = rows[0];
    if (!row) throw new Error('published count returned no row');
    this.frontier = row.frontier;
    this.settled += row.settled;
    this.total = this.settled + row.above;
    return this.total;
  }
}
