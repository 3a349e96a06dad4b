import type { Pool } from 'pg';
import { IdTail } from './id-tail.ts';
import { countedBefore, tailRows } from './sql.ts';

/**
 * Double processing: orders whose stock was reserved more than once (what the inbox
 * prevents). Tails reservations; an order crosses the line when its reservations
 * counted before plus the new ones reach two. The "before" count probes
 * reservations_order_idx for the orders in the batch only.
 */
export class ReservationsTail {
  private readonly tail = new IdTail();
  doubleProcessed = 0;

  constructor(private readonly pool: Pool) {}

  async baseline(): Promise<void> {
    const { rows } = await this.pool.query<{ max_id: string; doubled: number }>(
      `SELECT (SELECT COALESCE(max(id), 0) FROM reservations)::text AS max_id,
              (SELECT count(*) FROM (SELECT order_id FROM reservations GROUP BY order_id
                                      HAVING count(*) > 1) t)::int AS doubled`,
    );
    this.doubleProcessed = rows[0]?.doubled ?? 0;
    this.tail.reset(rows[0]?.max_id ?? '0');
  }

  /** Returns the orders that became double-processed in this batch. */
  async next(): Promise<string[]> {
    const { rows } = await this.pool.query<{ order_id: string; ids: string[]; before: number }>(
      `WITH n AS (${tailRows('reservations', 'id, order_id', '$3')})
       SELECT n.order_id::text AS order_id, array_agg(n.id::text ORDER BY n.id) AS ids,
              (SELECT count(*) FROM reservations r
                WHERE r.order_id = n.order_id AND ${countedBefore('r')})::int AS before
         FROM n GROUP BY n.order_id`,
      [this.tail.watermark, this.tail.gapIds, 5_000],
    );
    const ids = rows.flatMap((r) => r.ids).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    this.tail.advance(ids);
    const doubled = rows
      .filter((r) => r.before < 2 && r.before + r.ids.length >= 2)
      .map((r) => r.order_id);
    this.doubleProcessed += doubled.length;
    return doubled;
  }
}
