import type { Pool, PoolClient } from 'pg';

export interface RetentionBatchOptions {
  /** Rows older than this many seconds go (sent_at for the outbox, processed_at for the inbox). */
  olderThanSeconds: number;
  /** Rows per batch (default 1000): each batch is its own short transaction. */
  batchSize?: number;
  /** Pause between batches, so the deletes never hog the disk or the WAL (default 20 ms). */
  pauseMs?: number;
  /** Stop after this many batches (default: until nothing is left). */
  maxBatches?: number;
  /** Checked between batches: lets a background job stop promptly. */
  shouldStop?: () => boolean;
}

export interface RetentionResult {
  table: string;
  deleted: number;
  batches: number;
}

/** The tables with a retention; `outbox_default` is the partitioned layout's catch-all. */
export type RetentionTable = 'outbox' | 'outbox_default' | 'inbox';

async function inTransaction<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // Never queue behind a long lock: give up this batch, the next run retries.
    await client.query("SET LOCAL lock_timeout = '2s'");
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * One outbox batch. The outbox has no index on sent_at (one more index entry per
 * published event would be paid by the relay), so the batch walks the primary key from
 * where the last one stopped: ids grow with created_at, so old rows come first and the
 * walk ends at the first batch that reaches young rows, without a scan of the table.
 * Only sent rows go; pending and dead-lettered ones stay, whatever their age.
 */
async function outboxBatch(
  client: PoolClient,
  table: 'outbox' | 'outbox_default',
  cutoff: Date,
  after: string,
  limit: number,
): Promise<{ deleted: number; lastId: string | null; reachedYoung: boolean }> {
  const scanned = await client.query<{ id: string; young: boolean }>(
    `SELECT id, created_at >= $3 AS young FROM ${table} WHERE id > $1::bigint ORDER BY id LIMIT $2`,
    [after, limit, cutoff],
  );
  if (scanned.rows.length === 0) return { deleted: 0, lastId: null, reachedYoung: true };
  const gone = await client.query(
    `DELETE FROM ${table} WHERE id IN (
       SELECT id FROM ${table} WHERE id = ANY($1::bigint[]) AND sent_at < $2
       FOR UPDATE SKIP LOCKED)`,
    [scanned.rows.map((r) => r.id), cutoff],
  );
  return {
    deleted: gone.rowCount ?? 0,
    lastId: scanned.rows.at(-1)!.id,
    reachedYoung: scanned.rows.some((r) => r.young) || scanned.rows.length < limit,
  };
}

/** One inbox batch: oldest markers first, through inbox_processed_at_idx (migration 000005). */
async function inboxBatch(client: PoolClient, cutoff: Date, limit: number): Promise<number> {
  const gone = await client.query(
    `DELETE FROM inbox i USING (
       SELECT consumer, event_id FROM inbox WHERE processed_at < $1
       ORDER BY processed_at LIMIT $2 FOR UPDATE SKIP LOCKED) d
     WHERE i.consumer = d.consumer AND i.event_id = d.event_id`,
    [cutoff, limit],
  );
  return gone.rowCount ?? 0;
}

/**
 * Retention DELETE in bounded batches, each a short transaction of its own: never one
 * table-wide DELETE, never a long lock, and the relay and consumers keep going beside
 * it (rows they hold are skipped, SKIP LOCKED).
 */
export async function deleteInBatches(
  pool: Pool,
  table: RetentionTable,
  options: RetentionBatchOptions,
): Promise<RetentionResult> {
  const batchSize = options.batchSize ?? 1_000;
  const pauseMs = options.pauseMs ?? 20;
  // One cutoff for the whole run, from the database's clock.
  const { rows } = await pool.query<{ cutoff: Date }>(
    'SELECT now() - make_interval(secs => $1::float8) AS cutoff',
    [options.olderThanSeconds],
  );
  const cutoff = rows[0]!.cutoff;
  const result: RetentionResult = { table, deleted: 0, batches: 0 };
  let after = '0';
  for (;;) {
    if (options.shouldStop?.()) break;
    if (options.maxBatches !== undefined && result.batches >= options.maxBatches) break;
    let done: boolean;
    if (table === 'inbox') {
      const n = await inTransaction(pool, (c) => inboxBatch(c, cutoff, batchSize));
      result.deleted += n;
      done = n < batchSize;
    } else {
      const batch = await inTransaction(pool, (c) =>
        outboxBatch(c, table, cutoff, after, batchSize),
      );
      result.deleted += batch.deleted;
      after = batch.lastId ?? after;
      done = batch.reachedYoung;
    }
    result.batches += 1;
    if (done) break;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  return result;
}
