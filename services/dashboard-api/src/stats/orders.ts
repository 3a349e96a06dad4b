import type { Pool } from 'pg';

interface Checked {
  id: string;
  created_at: string;
  /** In the new window (created after the last upper bound), not a re-check. */
  fresh: boolean;
  delivered: boolean;
  /** Its OrderCreated is still in the outbox, unsent (pending, retrying or dead-lettered). */
  unsent: boolean;
}

/** Orders that just turned out to have lost their event. */
export interface LostOrder {
  orderId: string;
  createdAt: string;
}

// An order is judged as audit() judges it: without events when no OrderCreated of it
// was delivered and none is unsent in the outbox.
const judge = (alias: string) => `
  EXISTS (SELECT 1 FROM consumer_deliveries d
           WHERE d.aggregate_id = ${alias}.id::text AND d.event_type = 'OrderCreated') AS delivered,
  EXISTS (SELECT 1 FROM outbox x
           WHERE x.aggregate_type = 'order' AND x.aggregate_id = ${alias}.id::text
             AND x.event_type = 'OrderCreated' AND x.sent_at IS NULL) AS unsent`;

/**
 * Orders without events (the seed's "network died after commit"), counted without a
 * full scan per tick.
 *
 * Each tick judges only the orders that came of age since the last one: created in
 * (last bound, now() - settle] (orders_created_at_idx), each checked with two index
 * probes. An order whose event is still in the outbox is neither lost nor fine yet: it
 * is watched and judged again every tick. A lost order is also re-judged for a while
 * (`lateMs`), since its event may still arrive (a consumer that was down for longer
 * than the settle window). The same query counts the orders younger than the bound,
 * so the order total is exact without count(*) over the table.
 */
export class OrdersWithoutEvents {
  private bound = '-infinity';
  private settled = 0;
  private recent = 0;
  private lostCount = 0;
  private readonly watched = new Set<string>();
  private readonly lostRecently = new Map<string, number>();

  constructor(
    private readonly pool: Pool,
    private readonly settleSeconds: number,
    private readonly lateMs = 120_000,
  ) {}

  get count(): number {
    return this.lostCount;
  }

  get orders(): number {
    return this.settled + this.recent;
  }

  /** Watched (unsent) and recently lost orders: the per-tick re-check set. */
  get watching(): number {
    return this.watched.size + this.lostRecently.size;
  }

  /**
   * Judges every order from scratch (start and reset only: a full scan). Only the
   * orders that are not fine come back to JavaScript.
   */
  async baseline(now = Date.now()): Promise<void> {
    const { rows } = await this.pool.query<{
      upto: string;
      recent: number;
      settled: number;
      open: { id: string; unsent: boolean }[];
    }>(
      `WITH b AS (SELECT now() - make_interval(secs => $1::float8) AS upto),
       c AS (SELECT o.id::text AS id, ${judge('o')} FROM orders o, b WHERE o.created_at <= b.upto)
       SELECT b.upto::text AS upto,
              (SELECT count(*) FROM orders o WHERE o.created_at > b.upto)::int AS recent,
              (SELECT count(*) FROM c)::int AS settled,
              COALESCE((SELECT json_agg(json_build_object('id', c.id, 'unsent', c.unsent))
                          FROM c WHERE NOT c.delivered), '[]'::json) AS open
         FROM b`,
      [this.settleSeconds],
    );
    const row = rows[0];
    if (!row) throw new Error('orders baseline returned no row');
    this.bound = row.upto;
    this.recent = row.recent;
    this.settled = row.settled;
    this.watched.clear();
    this.lostRecently.clear();
    for (const o of row.open) {
      if (o.unsent) this.watched.add(o.id);
      else this.lostRecently.set(o.id, now);
    }
    this.lostCount = this.lostRecently.size;
  }

  /** Judges the orders that came of age, and the watched ones; returns the newly lost. */
  async next(now = Date.now()): Promise<LostOrder[]> {
    const recheck = [...this.watched, ...this.lostRecently.keys()];
    const { rows } = await this.pool.query<{ upto: string; recent: number; checked: Checked[] }>(
      `WITH b AS (SELECT now() - make_interval(secs => $2::float8) AS upto),
       w AS (
         SELECT o.id, o.created_at, true AS fresh FROM orders o, b
          WHERE o.created_at > $1::timestamptz AND o.created_at <= b.upto
         UNION ALL
         SELECT o.id, o.created_at, false FROM orders o, b
          WHERE o.id = ANY($3::uuid[]) AND NOT (o.created_at > $1::timestamptz AND o.created_at <= b.upto)
       ),
       c AS (SELECT w.id::text AS id, w.created_at::text AS created_at, w.fresh, ${judge('w')} FROM w)
       SELECT b.upto::text AS upto,
              (SELECT count(*) FROM orders o WHERE o.created_at > b.upto)::int AS recent,
              COALESCE((SELECT json_agg(c) FROM c), '[]'::json) AS checked
         FROM b`,
      [this.bound, this.settleSeconds, recheck],
    );
    const row = rows[0];
    if (!row) throw new Error('orders check returned no row');
    this.bound = row.upto;
    this.recent = row.recent;

    const lost: LostOrder[] = [];
    const seen = new Set<string>();
    for (const c of row.checked) {
      seen.add(c.id);
      if (c.fresh) this.settled += 1;
      const wasLost = this.lostRecently.has(c.id);
      if (c.delivered) {
        this.watched.delete(c.id);
        if (wasLost) {
          this.lostRecently.delete(c.id);
          this.lostCount -= 1;
        }
      } else if (c.unsent) {
        this.watched.add(c.id);
        if (wasLost) {
          this.lostRecently.delete(c.id);
          this.lostCount -= 1;
        }
      } else if (!wasLost) {
        this.watched.delete(c.id);
        this.lostRecently.set(c.id, now);
        this.lostCount += 1;
        lost.push({ orderId: c.id, createdAt: c.created_at });
      }
    }
    // Re-checked ids that are gone (deleted orders) stop being watched.
    for (const id of recheck) {
      if (!seen.has(id)) {
        this.watched.delete(id);
        if (this.lostRecently.delete(id)) this.lostCount -= 1;
      }
    }
    for (const [id, since] of this.lostRecently) {
      if (now - since > this.lateMs) this.lostRecently.delete(id);
    }
    return lost;
  }
}
