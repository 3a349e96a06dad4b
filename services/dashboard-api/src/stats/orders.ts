import { outboxState } from '@outbox/core';
import type { Pool } from 'pg';
import type { OrderMode } from '../contract.ts';
import type { LostOrder } from './undelivered.ts';

interface Checked {
  id: string;
  created_at: string;
  mode: OrderMode;
  /** Its OrderCreated outbox row was marked sent (naive orders have none). */
  sent: boolean;
  /** In the new window (created after the last upper bound), not a re-check. */
  fresh: boolean;
  delivered: boolean;
  /** Its OrderCreated is unsent in the outbox (pending, retrying, dead-lettered) or just sent. */
  unsent: boolean;
}

// An order is judged as audit() judges it: without events when no OrderCreated of it
// was delivered and none is unsent in the outbox. One difference: an event the relay
// marked sent less than the settle window ago still counts as in flight, since the
// consumer may not have recorded it yet. Without it, an order re-judged between the
// relay's UPDATE and the consumer's commit (after a Kafka outage, say) was counted lost
// for a moment — seen by the e2e run (web-2 in CONTRACT-REQUESTS.md).
const inFlight = (alias: string, settle: string) => `
  EXISTS (SELECT 1 FROM outbox x
           WHERE x.aggregate_type = 'order' AND x.aggregate_id = ${alias}.id::text
             AND x.event_type = 'OrderCreated'
             AND (${outboxState('unsent', 'x')} OR x.sent_at > now() - make_interval(secs => ${settle})))`;
// Sent at all: tells a lost outbox event the relay published from one it never had.
const sent = (alias: string) => `
  EXISTS (SELECT 1 FROM outbox x
           WHERE x.aggregate_type = 'order' AND x.aggregate_id = ${alias}.id::text
             AND x.event_type = 'OrderCreated' AND x.sent_at IS NOT NULL)`;
const judge = (alias: string, settle: string) => `
  EXISTS (SELECT 1 FROM consumer_deliveries d
           WHERE d.aggregate_id = ${alias}.id::text AND d.event_type = 'OrderCreated') AS delivered,
  ${inFlight(alias, settle)} AS unsent,
  ${sent(alias)} AS sent`;

/**
 * Orders without events (as audit() counts them; UndeliveredOrders then tells the
 * never published from the not yet consumed), counted without a full scan per tick.
 *
 * Each tick judges only the orders that came of age since the last one: created in
 * (last bound, now() - settle] (orders_created_at_idx), each with three index probes.
 * The same query counts the orders younger than the bound, so the order total is
 * exact without count(*) over the table.
 *
 * Later changes of a verdict are event-driven: an OrderCreated seen by the deliveries
 * tail clears its order (watched or lost: `delivered()`), so a lost order whose event
 * arrives late stops counting. Orders whose event is still unsent in the outbox are
 * watched and re-judged in slices every `recheckMs` only, for the rare event that is
 * marked sent and never delivered: measured at 1,000 watched orders, judging them all
 * on every tick cost ~35 ms of a ~45 ms tick.
 */
export class OrdersWithoutEvents {
  private bound = '-infinity';
  private settled = 0;
  private recent = 0;
  private readonly watched = new Set<string>();
  private readonly lost = new Map<string, LostOrder>();
  private lastRecheck = 0;

  constructor(
    private readonly pool: Pool,
    private readonly settleSeconds: number,
    private readonly recheckMs = 5_000,
    private readonly recheckBatch = 1_000,
  ) {}

  get count(): number {
    return this.lost.size;
  }

  get orders(): number {
    return this.settled + this.recent;
  }

  /** The orders judged without events now, with their mode (for UndeliveredOrders). */
  get lostOrders(): ReadonlyMap<string, LostOrder> {
    return this.lost;
  }

  /** Orders whose event is still unsent in the outbox. */
  get watching(): number {
    return this.watched.size;
  }

  /**
   * Judges every order from scratch (start and reset only: a full scan). The orders
   * with no delivered OrderCreated are found by a hash anti-join (1.9 s at 1M rows,
   * against 15.7 s with two probes per order); only those come back to JavaScript.
   */
  async baseline(): Promise<void> {
    const { rows } = await this.pool.query<{
      upto: string;
      recent: number;
      settled: number;
      open: { id: string; unsent: boolean; mode: OrderMode; sent: boolean }[];
    }>(
      `WITH b AS (SELECT now() - make_interval(secs => $1::float8) AS upto),
       open AS (
         SELECT o.id, o.mode FROM orders o, b WHERE o.created_at <= b.upto
            AND NOT EXISTS (SELECT 1 FROM consumer_deliveries d
                             WHERE d.aggregate_id = o.id::text AND d.event_type = 'OrderCreated'))
       SELECT b.upto::text AS upto,
              (SELECT count(*) FROM orders o WHERE o.created_at > b.upto)::int AS recent,
              (SELECT count(*) FROM orders o WHERE o.created_at <= b.upto)::int AS settled,
              COALESCE((SELECT json_agg(json_build_object('id', p.id::text, 'mode', p.mode,
                  'unsent', ${inFlight('p', '$1::float8')}, 'sent', ${sent('p')}))
                FROM open p), '[]'::json) AS open
         FROM b`,
      [this.settleSeconds],
    );
    const row = rows[0];
    if (!row) throw new Error('orders baseline returned no row');
    this.bound = row.upto;
    this.recent = row.recent;
    this.settled = row.settled;
    this.watched.clear();
    this.lost.clear();
    this.lastRecheck = Date.now();
    for (const o of row.open) {
      if (o.unsent) this.watched.add(o.id);
      else this.lost.set(o.id, { orderId: o.id, mode: o.mode, sent: o.sent });
    }
  }

  /** OrderCreated delivered for these orders (from the deliveries tail): none of them is lost. */
  delivered(orderIds: readonly string[]): string[] {
    const found: string[] = [];
    for (const id of orderIds) {
      this.watched.delete(id);
      if (this.lost.delete(id)) found.push(id);
    }
    return found;
  }

  /** Judges the orders that came of age (and a slice of the watched ones); returns the newly lost. */
  async next(now = Date.now()): Promise<LostOrder[]> {
    let recheck: string[] = [];
    if (now - this.lastRecheck >= this.recheckMs && this.watched.size > 0) {
      this.lastRecheck = now;
      // Oldest first (insertion order); re-added ones go to the back.
      recheck = [...this.watched].slice(0, this.recheckBatch);
    }
    const { rows } = await this.pool.query<{ upto: string; recent: number; checked: Checked[] }>(
      `WITH b AS (SELECT now() - make_interval(secs => $2::float8) AS upto),
       w AS (
         SELECT o.id, o.created_at, o.mode, true AS fresh FROM orders o, b
          WHERE o.created_at > $1::timestamptz AND o.created_at <= b.upto
         UNION ALL
         SELECT o.id, o.created_at, o.mode, false FROM orders o, b
          WHERE o.id = ANY($3::uuid[]) AND NOT (o.created_at > $1::timestamptz AND o.created_at <= b.upto)
       ),
       c AS (SELECT w.id::text AS id, w.created_at::text AS created_at, w.mode, w.fresh,
                    ${judge('w', '$2::float8')} FROM w)
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
      this.watched.delete(c.id);
      if (c.delivered) continue;
      if (c.unsent) this.watched.add(c.id);
      else if (!this.lost.has(c.id)) {
        const order: LostOrder = { orderId: c.id, mode: c.mode, sent: c.sent };
        this.lost.set(c.id, order);
        lost.push(order);
      }
    }
    // Re-checked ids that are gone (deleted orders) stop being watched.
    for (const id of recheck) if (!seen.has(id)) this.watched.delete(id);
    return lost;
  }
}
