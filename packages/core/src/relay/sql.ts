import { outboxState } from '../outbox/state.ts';

/**
 * The relay's queries, one function each, returning `{ text, values }`. Values are
 * always parameters; arrays go through unnest.
 */
export interface Query {
  text: string;
  values: unknown[];
}

export interface OutboxRow {
  id: string;
  aggregate_type: string;
  aggregate_id: string;
  event_type: string;
  event_version: number;
  payload: string;
  headers: Record<string, string> | null;
  created_at: Date;
  attempts: number;
}

const claimColumns = `o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.event_version,
  o.payload::text AS payload, o.headers, o.created_at, o.attempts`;

// A row is claimable when it is pending, due, and no earlier event of its aggregate is
// still failing or dead-lettered (FIFO per aggregate holds through retries). The
// NOT EXISTS probes outbox_blocking_idx, which only holds failing rows: cheap.
const claimable = `${outboxState('pending', 'o')} AND o.next_attempt_at <= now()
  AND NOT EXISTS (
    SELECT 1 FROM outbox b
    WHERE b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
      AND b.id < o.id AND ${outboxState('blocking', 'b')})`;

/** The seed's claim: oldest pending first, rows locked by another relay skipped. */
export function claimBatch(limit: number): Query {
  return {
    text: `SELECT ${claimColumns} FROM outbox o WHERE ${claimable}
           ORDER BY o.id LIMIT $1 FOR UPDATE OF o SKIP LOCKED`,
    values: [limit],
  };
}

/**
 * The same claim over the wanted shards whose lock this transaction takes, in one
 * statement: the CTE takes the transaction-scoped advisory lock of each wanted shard
 * that is free (the locks end with the transaction), and only rows of those shards are
 * claimed. Two replicas can never relay the same shard at the same time, whatever
 * their views of the membership. MATERIALIZED (as a CTE with a volatile function is
 * anyway) evaluates the locks once, before the claim; one statement instead of a lock
 * query and then a claim saves a round trip per tick.
 */
export function claimLockedShardBatch(shards: number[], limit: number): Query {
  return {
    text: `WITH locked AS MATERIALIZED (
             SELECT s::smallint AS shard FROM unnest($1::int[]) AS s
              WHERE pg_try_advisory_xact_lock(hashtext('outbox_shard.' || current_schema()), s))
           SELECT ${claimColumns} FROM outbox o
            WHERE o.shard = ANY (ARRAY(SELECT shard FROM locked)) AND ${claimable}
            ORDER BY o.id LIMIT $2 FOR UPDATE OF o SKIP LOCKED`,
    values: [shards, limit],
  };
}

/**
 * Takes and releases the wake-up lock exclusively (migration 000006): returns once every
 * writer that read the sleeping flag before it was set has committed. Run by a relay
 * after it set `sleeping = true` and before its last look, so that look sees their rows.
 * Autocommit: the statement's own transaction releases the lock.
 */
export function awaitWritersInCommit(): Query {
  return {
    text: `SELECT pg_advisory_xact_lock(hashtext('outbox_wakeup.' || current_schema()))`,
    values: [],
  };
}

/**
 * Marks the whole batch sent in one UPDATE, remembering each row's topic, and the
 * partition and offset Kafka acknowledged for it where known (migration 000009; arrays
 * shorter than `ids`, or null entries, leave them NULL: unnest pads). `sent_at` is the
 * time of this statement, after Kafka's ack: `now()` would be the claim's (the
 * transaction's start), which lies before a produce that waited out an outage, and
 * made such events look published during it.
 */
export function markSent(
  ids: string[],
  topics: string[],
  partitions: (number | null)[] = [],
  offsets: (string | null)[] = [],
): Query {
  return {
    text: `UPDATE outbox o SET sent_at = statement_timestamp(), topic = t.topic, error = NULL,
             kafka_partition = t.kafka_partition, kafka_offset = t.kafka_offset
           FROM unnest($1::bigint[], $2::text[], $3::int[], $4::bigint[])
                AS t(id, topic, kafka_partition, kafka_offset)
           WHERE o.id = t.id`,
    values: [ids, topics, partitions, offsets],
  };
}

/**
 * Records a failure on each row: attempts + 1, the error, the next try after an
 * exponential backoff (seconds: base * 2^attempts, capped), dead-lettered at the cap.
 * The backoff counts from this statement, not from `now()` (the claim): a tick that
 * spent its time producing, or replacing its producer, would shorten it.
 */
export function markFailed(
  ids: string[],
  errors: string[],
  opts: { baseSeconds: number; maxSeconds: number; maxAttempts: number },
): Query {
  return {
    text: `UPDATE outbox o SET
             attempts = o.attempts + 1,
             error = left(f.error, 2000),
             next_attempt_at = statement_timestamp() + make_interval(secs => least($4::float8, $3::float8 * power(2, o.attempts))),
             dead_lettered_at = CASE WHEN o.attempts + 1 >= $5 THEN now() END
           FROM unnest($1::bigint[], $2::text[]) AS f(id, error) WHERE o.id = f.id`,
    values: [ids, errors, opts.baseSeconds, opts.maxSeconds, opts.maxAttempts],
  };
}

/** Operator action: put a dead-lettered (or failing) row back in the queue, now. */
export function requeue(ids: string[]): Query {
  return {
    text: `UPDATE outbox SET dead_lettered_at = NULL, attempts = 0, next_attempt_at = now()
           WHERE id = ANY($1::bigint[]) AND ${outboxState('unsent')} RETURNING id`,
    values: [ids],
  };
}

/** pending count and lag of the oldest pending row: both read the pending index only. */
export function pendingStats(): Query {
  return {
    text: `SELECT (SELECT count(*) FROM outbox WHERE ${outboxState('pending')})::int AS pending,
                  (SELECT count(*) FROM outbox WHERE ${outboxState('deadLettered')})::int AS dead_lettered,
                  COALESCE(EXTRACT(EPOCH FROM now() - (
                    SELECT created_at FROM outbox WHERE ${outboxState('pending')}
                    ORDER BY id LIMIT 1)), 0)::float8 AS lag_seconds`,
    values: [],
  };
}

// Relay membership (outbox_relay_members, migrations 000001/000003/000007): every
// statement that writes it is here. A replica's row says it is alive (heartbeat_at,
// within its own ttl_ms: the outbox_relay_live_members view), sharded or not, asleep
// or not (writers notify only while some relay is asleep), and which shards it took.

/** Heartbeat of a sharded replica, and the live sharded members as of before it. */
export function heartbeatSharded(replicaId: string, ttlMs: number): Query {
  return {
    text: `WITH beat AS (
         INSERT INTO outbox_relay_members (replica_id, heartbeat_at, sharded, ttl_ms)
         VALUES ($1, now(), true, $2)
         ON CONFLICT (replica_id) DO UPDATE SET heartbeat_at = now(), sharded = true,
           ttl_ms = EXCLUDED.ttl_ms
       )
       SELECT replica_id FROM outbox_relay_live_members WHERE sharded`,
    values: [replicaId, Math.round(ttlMs)],
  };
}

/** Records the shards a replica took (shown by the dashboard). */
export function recordShards(replicaId: string, shards: number[]): Query {
  return {
    text: 'UPDATE outbox_relay_members SET shards = $2 WHERE replica_id = $1',
    values: [replicaId, shards],
  };
}

/** Marks a replica asleep or awake (and alive); see migrations 000003, 000006, 000007. */
export function markSleeping(
  replicaId: string,
  options: { sharded: boolean; sleeping: boolean; ttlMs: number },
): Query {
  return {
    text: `INSERT INTO outbox_relay_members (replica_id, sharded, sleeping, ttl_ms) VALUES ($1, $2, $3, $4)
       ON CONFLICT (replica_id) DO UPDATE SET sleeping = EXCLUDED.sleeping, sharded = EXCLUDED.sharded,
         ttl_ms = EXCLUDED.ttl_ms, heartbeat_at = now()`,
    values: [replicaId, options.sharded, options.sleeping, options.ttlMs],
  };
}

/** Leaves the membership: the others take over this replica's shards at once. */
export function leaveMembership(replicaId: string): Query {
  return { text: 'DELETE FROM outbox_relay_members WHERE replica_id = $1', values: [replicaId] };
}
