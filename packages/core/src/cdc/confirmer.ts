import type pg from 'pg';
import { silentLogger, type Logger } from '../logger.ts';
import { outboxState } from '../outbox/state.ts';
import type { Query } from '../relay/sql.ts';

/**
 * With CDC, Debezium publishes each outbox insert from the WAL and nobody sets
 * `sent_at`: pending, lag, cleanup (which never deletes a pending row) and a switch
 * back to the polling relay would all see every event as unsent. The confirmer gives
 * `sent_at` its meaning back: a row is sent once the replication slot has confirmed a
 * WAL position past its commit.
 *
 * Why that is safe: Connect commits a source task's offsets only up to the records the
 * broker acknowledged, in order, and Debezium confirms the slot (confirmed_flush_lsn)
 * from the committed offsets. So a confirmed position L means every outbox insert
 * committed before L is on the topic.
 *
 * A round, two statements apart:
 * 1. one statement takes the pending ids it sees and pg_current_wal_insert_lsn(). Its
 *    snapshot is taken when it starts, so every row it sees committed before that LSN;
 * 2. once the slot's confirmed_flush_lsn has passed that LSN, those ids (still pending)
 *    are marked sent.
 * Debezium confirms the slot only up to the last commit it captured: when the outbox
 * falls idle the slot stays behind the last round, and those rows stay pending, unless
 * the connector also captures something else that is written all the time. Heartbeats
 * alone (`heartbeat.interval.ms`) were not enough here after a restart from saved
 * offsets; a `heartbeat.action.query` writing a table that is in the connector's
 * publication is (the dev-stack's connector does so once a second; see its
 * connect-config.ts).
 *
 * Only for rows the connector captures: rows committed before the slot existed
 * (`snapshot.mode = no_data`) are the polling relay's. Start the confirmer once the
 * relay has drained every row it saw after the slot was created.
 */
export interface CdcConfirmerOptions {
  pool: pg.Pool;
  /** The connector's replication slot. */
  slot: string;
  /** The topic the connector routes the outbox to (recorded on each row, as the relay does). */
  topic: string;
  /** How often a round is tried (default 1,000 ms). */
  intervalMs?: number;
  /** The most ids in one round (default 10,000). */
  batchSize?: number;
  log?: Logger;
}

export interface ConfirmResult {
  /** Rows marked sent by this call. */
  marked: number;
  /** Ids of the round that waits for the slot (0 when none waits). */
  waiting: number;
}

interface Round {
  lsn: string;
  ids: string[];
}

export class CdcConfirmer {
  private round: Round | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private readonly log: Logger;
  private lastTick = Date.now();

  constructor(private readonly options: CdcConfirmerOptions) {
    this.log = options.log ?? silentLogger;
  }

  /** When a round last completed (or when the confirmer was built): for a health check. */
  get lastTickAt(): number {
    return this.lastTick;
  }

  /** Marks the waiting round if the slot has passed it, then takes the next round. */
  async tick(): Promise<ConfirmResult> {
    const { pool, slot } = this.options;
    let marked = 0;
    if (this.round) {
      const { rows } = await pool.query<{ confirmed: boolean | null }>(
        slotPassed(slot, this.round),
      );
      if (rows.length === 0) throw new Error(`replication slot ${slot} does not exist`);
      if (!rows[0]!.confirmed) return { marked: 0, waiting: this.round.ids.length };
      marked = (await pool.query(markConfirmed(this.round, this.options.topic))).rowCount ?? 0;
      this.round = undefined;
    }
    const { rows } = await pool.query<Round>(takeRound(this.options.batchSize ?? 10_000));
    if (rows[0]!.ids.length > 0) this.round = rows[0];
    return { marked, waiting: this.round?.ids.length ?? 0 };
  }

  /** Runs a round every intervalMs until stop(); a failed round is logged and tried again. */
  start(): void {
    const every = this.options.intervalMs ?? 1_000;
    const loop = () => {
      this.running = this.tick()
        .then(({ marked }) => {
          this.lastTick = Date.now();
          if (marked > 0) this.log.debug({ marked }, 'cdc: rows confirmed by the slot marked sent');
        })
        .catch((error: unknown) => this.log.warn({ err: error }, 'cdc: confirm round failed'))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(loop, every);
        });
    };
    this.timer = setTimeout(loop, every);
  }

  /** Stops the loop; the round in flight finishes. */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}

/** The pending ids this statement sees, and a WAL position after all their commits. */
export function takeRound(limit: number): Query {
  return {
    text: `SELECT pg_current_wal_insert_lsn()::text AS lsn,
                  ARRAY(SELECT id FROM outbox WHERE ${outboxState('pending')} ORDER BY id LIMIT $1)::text[] AS ids`,
    values: [limit],
  };
}

/** Whether the slot has confirmed the round's position (no row: no such slot). */
export function slotPassed(slot: string, round: Round): Query {
  return {
    text: `SELECT confirmed_flush_lsn >= $2::pg_lsn AS confirmed FROM pg_replication_slots WHERE slot_name = $1`,
    values: [slot, round.lsn],
  };
}

/** Marks the round's rows sent (those still pending: a requeue or a relay may have moved). */
export function markConfirmed(round: Round, topic: string): Query {
  return {
    text: `UPDATE outbox SET sent_at = statement_timestamp(), topic = $2, error = NULL
            WHERE id = ANY($1::bigint[]) AND ${outboxState('pending')}`,
    values: [round.ids, topic],
  };
}
