import type { Query } from '../relay/sql.ts';

/**
 * With CDC (Debezium reading the outbox's inserts from the WAL) nobody sets `sent_at`:
 * "pending" and "lag" are the replication slot's, not the outbox's. What the connector
 * has not confirmed is the WAL between the slot's confirmed position and the server's
 * current one; what the server must keep for it starts at the slot's restart position
 * and grows for as long as the connector is away (a slot left behind holds WAL for
 * ever). Both are bytes of the whole server's WAL, not rows: every write of every table
 * counts, the outbox's among them.
 */
export interface SlotLag {
  /** A walsender streams from the slot (the connector is connected). */
  active: boolean;
  /** WAL written since the slot's confirmed position (bytes): what the connector has not confirmed. */
  lagBytes: number;
  /** WAL the server keeps for the slot, from its restart position (bytes). */
  retainedBytes: number;
  /**
   * The walsender's replay lag (seconds), as the connector's confirmations give it;
   * null while nothing is connected or after the stream has been idle.
   */
  lagSeconds: number | null;
  /** pg_replication_slots.wal_status: reserved, extended, unreserved or lost. */
  walStatus: string | null;
}

/**
 * The replication slot's lag (a row, or none when no such slot exists). The columns
 * come from pg_replication_slots and pg_stat_replication; the role needs
 * pg_read_all_stats (or superuser) to see another role's walsender.
 */
export function slotLag(slot: string): Query {
  return {
    text: `SELECT s.active,
                  pg_wal_lsn_diff(pg_current_wal_lsn(), s.confirmed_flush_lsn)::float8 AS lag_bytes,
                  pg_wal_lsn_diff(pg_current_wal_lsn(), s.restart_lsn)::float8 AS retained_bytes,
                  EXTRACT(EPOCH FROM r.replay_lag)::float8 AS lag_seconds,
                  s.wal_status
             FROM pg_replication_slots s
             LEFT JOIN pg_stat_replication r ON r.pid = s.active_pid
            WHERE s.slot_name = $1`,
    values: [slot],
  };
}

interface SlotLagRow {
  active: boolean;
  lag_bytes: number | null;
  retained_bytes: number | null;
  lag_seconds: number | null;
  wal_status: string | null;
}

/** Runs slotLag on `db` (a pool or a client): undefined when the slot does not exist. */
export async function readSlotLag(
  db: { query: (q: Query) => Promise<{ rows: unknown[] }> },
  slot: string,
): Promise<SlotLag | undefined> {
  const { rows } = await db.query(slotLag(slot));
  const row = rows[0] as SlotLagRow | undefined;
  if (!row) return undefined;
  return {
    active: row.active,
    lagBytes: Math.max(0, row.lag_bytes ?? 0),
    retainedBytes: Math.max(0, row.retained_bytes ?? 0),
    lagSeconds: row.lag_seconds,
    walStatus: row.wal_status,
  };
}
