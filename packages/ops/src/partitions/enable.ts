import pg from 'pg';
import type { Pool, PoolClient } from 'pg';
import { isPartitioned } from './catalog.ts';
import { daysBetween, type Day } from './days.ts';

export interface EnableOptions {
  /** Daily partitions created beyond today (default 7). */
  daysAhead?: number;
  /** Longest wait for the outbox's lock before giving up (default 10 s). */
  lockTimeoutMs?: number;
  now?: Date;
}

export interface EnableResult {
  /** false when the outbox was partitioned already (nothing done). */
  converted: boolean;
  copiedRows: number;
  partitions: string[];
}

const q = pg.escapeIdentifier;

/** Creates the partition for `day` (if missing) with the outbox's storage settings. */
export async function createDayPartition(
  client: PoolClient,
  day: Day,
  reloptions: string[],
): Promise<void> {
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${q(day.name)} PARTITION OF outbox
     FOR VALUES FROM (${pg.escapeLiteral(day.from.toISOString())}) TO (${pg.escapeLiteral(day.to.toISOString())})`,
  );
  if (reloptions.length > 0)
    await client.query(`ALTER TABLE ${q(day.name)} SET (${reloptions.join(', ')})`);
}

/** The outbox's per-table settings (autovacuum, fillfactor), as `key=value` items. */
export async function outboxReloptions(client: PoolClient, table: string): Promise<string[]> {
  const { rows } = await client.query<{ opts: string[] | null }>(
    `SELECT reloptions AS opts FROM pg_class
     WHERE oid = to_regclass(quote_ident(current_schema()) || '.' || quote_ident($1))`,
    [table],
  );
  // Values PostgreSQL itself printed: numbers and identifiers, no quoting needed.
  return (rows[0]?.opts ?? []).filter((o) => /^[a-z_]+=[A-Za-z0-9._-]+$/.test(o));
}

/**
 * Converts the current schema's `outbox` into a table partitioned by day of
 * `created_at`, in one transaction under an ACCESS EXCLUSIVE lock: the table is
 * renamed, a partitioned twin takes its name, columns, defaults (the same id
 * sequence), indexes, triggers and storage settings, every row is copied with its id,
 * and the old table is dropped. Writers and relays wait for the lock meanwhile, then
 * go on against the new table; nothing else changes for them.
 *
 * The primary key becomes (id, created_at): PostgreSQL requires the partition key in
 * every unique index. A DEFAULT partition catches rows no daily partition covers, so an
 * append never fails because the maintenance job was late.
 */
export async function enablePartitioning(
  pool: Pool,
  options: EnableOptions = {},
): Promise<EnableResult> {
  const now = options.now ?? new Date();
  const daysAhead = options.daysAhead ?? 7;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `SET LOCAL lock_timeout = '${Math.round(options.lockTimeoutMs ?? 10_000)}ms'`,
    );
    if (await isPartitioned(client)) {
      await client.query('ROLLBACK');
      return { converted: false, copiedRows: 0, partitions: [] };
    }
    await client.query('LOCK TABLE outbox IN ACCESS EXCLUSIVE MODE');

    // Definitions read before the rename name the table `outbox`: replayed after it,
    // they build the same indexes and triggers on the new table.
    const indexes = await client.query<{
      name: string;
      def: string;
      primary: boolean;
      unique: boolean;
    }>(
      `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def,
              i.indisprimary AS primary, i.indisunique AS unique
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       WHERE i.indrelid = 'outbox'::regclass`,
    );
    const unique = indexes.rows.filter((i) => i.unique && !i.primary);
    if (unique.length > 0) {
      throw new Error(
        `cannot partition: unique index ${unique.map((i) => i.name).join(', ')} lacks created_at`,
      );
    }
    const triggers = await client.query<{ def: string }>(
      `SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger
       WHERE tgrelid = 'outbox'::regclass AND NOT tgisinternal`,
    );
    const columns = await client.query<{ name: string }>(
      `SELECT attname AS name FROM pg_attribute
       WHERE attrelid = 'outbox'::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = ''
       ORDER BY attnum`,
    );
    const sequence = await client.query<{ seq: string | null }>(
      `SELECT pg_get_serial_sequence('outbox', 'id') AS seq`,
    );
    const reloptions = await outboxReloptions(client, 'outbox');
    const span = await client.query<{ first: Date | null }>(
      'SELECT min(created_at) AS first FROM outbox',
    );

    await client.query('ALTER TABLE outbox RENAME TO outbox_unpartitioned');
    for (const index of indexes.rows)
      await client.query(
        `ALTER INDEX ${q(index.name)} RENAME TO ${q(`${index.name}_unpartitioned`)}`,
      );
    await client.query(
      `CREATE TABLE outbox (LIKE outbox_unpartitioned INCLUDING DEFAULTS INCLUDING GENERATED)
       PARTITION BY RANGE (created_at)`,
    );
    await client.query(
      'ALTER TABLE outbox ADD CONSTRAINT outbox_pkey PRIMARY KEY (id, created_at)',
    );
    if (sequence.rows[0]?.seq) {
      // The regclass cast checks the name is an existing relation and quotes it.
      const owned = await client.query<{ sql: string }>(
        "SELECT format('ALTER SEQUENCE %s OWNED BY outbox.id', $1::regclass) AS sql",
        [sequence.rows[0].seq],
      );
      await client.query(owned.rows[0]!.sql);
    }

    await client.query('CREATE TABLE outbox_default PARTITION OF outbox DEFAULT');
    if (reloptions.length > 0)
      await client.query(`ALTER TABLE outbox_default SET (${reloptions.join(', ')})`);
    const last = new Date(now.getTime() + daysAhead * 86_400_000);
    const days = daysBetween(span.rows[0]?.first ?? now, last);
    for (const day of days) await createDayPartition(client, day, reloptions);

    for (const index of indexes.rows.filter((i) => !i.primary)) await client.query(index.def);
    for (const trigger of triggers.rows) await client.query(trigger.def);

    const list = columns.rows.map((c) => q(c.name)).join(', ');
    const copied = await client.query(
      `INSERT INTO outbox (${list}) SELECT ${list} FROM outbox_unpartitioned`,
    );
    await client.query('DROP TABLE outbox_unpartitioned');
    await client.query('COMMIT');
    return {
      converted: true,
      copiedRows: copied.rowCount ?? 0,
      partitions: days.map((d) => d.name),
    };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
