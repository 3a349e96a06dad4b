import type pg from 'pg';
import { DatabaseSetup } from 'pg-transactional-outbox';
import type { BenchContext } from './context.ts';
import { aggregateIdSql, eventTypeSql, headersSql, payloadSql } from './payload.ts';
import { fmt } from '../stats.ts';

/**
 * The outbox tables the variants run on, each as its authors define it, and bulk
 * backlogs for them (INSERT … SELECT generate_series: one statement, no round trips).
 */

/** The seed's table and its two indexes, verbatim (the pending index is on created_at). */
export const SEED_DDL = `
CREATE TABLE outbox (
    id             BIGSERIAL PRIMARY KEY,
    aggregate_type TEXT NOT NULL,
    aggregate_id   TEXT NOT NULL,
    event_type     TEXT NOT NULL,
    payload        JSONB NOT NULL,
    headers        JSONB,
    created_at     TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    sent_at        TIMESTAMPTZ,
    attempts       INT NOT NULL DEFAULT 0,
    error          TEXT
);
CREATE INDEX idx_outbox_pending ON outbox (created_at) WHERE sent_at IS NULL;
CREATE INDEX idx_outbox_agg ON outbox (aggregate_type, aggregate_id);`;

/** The peer's table, polling function and indexes, as its DatabaseSetup generates them. */
export function peerDdl(schema: string): string {
  const config = {
    outboxOrInbox: 'outbox' as const,
    database: 'outbox_lab',
    schema,
    table: 'outbox',
    listenerRole: 'postgres',
    nextMessagesSchema: schema,
    nextMessagesName: 'next_outbox_messages',
  };
  return [
    DatabaseSetup.dropAndCreateTable(config),
    DatabaseSetup.createPollingFunction(config),
    DatabaseSetup.setupPollingIndexes(config),
  ].join('\n');
}

export type TableKind = 'ours' | 'seed' | 'peer';

/** Appends `count` pending events (ids `from`…) to the outbox of `kind` in one statement. */
export async function fillOutbox(
  pool: pg.Pool,
  kind: TableKind,
  count: number,
  from = 1,
): Promise<void> {
  const series = `generate_series(${from}::bigint, ${from + count - 1}::bigint) AS s(i)`;
  if (kind === 'peer') {
    // The aggregate id as the segment: the peer's way to keep one aggregate's events in order.
    await pool.query(
      `INSERT INTO outbox (id, aggregate_type, aggregate_id, message_type, segment, payload, metadata)
       SELECT gen_random_uuid(), 'order', ${aggregateIdSql('i')}, ${eventTypeSql('i')}, ${aggregateIdSql('i')},
              ${payloadSql('i')}, ${headersSql('i')}
       FROM ${series}`,
    );
    return;
  }
  await pool.query(
    `INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers)
     SELECT 'order', ${aggregateIdSql('i')}, ${eventTypeSql('i')}, ${payloadSql('i')}, ${headersSql('i')}
     FROM ${series}`,
  );
}

const BACKLOG_COLUMNS: Record<TableKind, string> = {
  ours: 'aggregate_type, aggregate_id, event_type, payload, headers',
  seed: 'aggregate_type, aggregate_id, event_type, payload, headers',
  peer: 'id, aggregate_type, aggregate_id, message_type, segment, payload, metadata',
};

/**
 * Builds `count` pending events once into a `backlog` table beside the outbox, so that
 * each run can restore the same backlog by a plain copy (no JSON building per run).
 */
export async function saveBacklog(pool: pg.Pool, kind: TableKind, count: number): Promise<void> {
  await pool.query('TRUNCATE outbox');
  await fillOutbox(pool, kind, count);
  await pool.query('DROP TABLE IF EXISTS backlog');
  const order = kind === 'peer' ? 'created_at' : 'id';
  await pool.query(
    `CREATE TABLE backlog AS SELECT ${BACKLOG_COLUMNS[kind]} FROM outbox ORDER BY ${order}`,
  );
}

/** Empties the outbox and puts the saved backlog back in it, in its order. */
export async function restoreBacklog(pool: pg.Pool, kind: TableKind): Promise<void> {
  await pool.query('TRUNCATE outbox RESTART IDENTITY');
  await pool.query(
    `INSERT INTO outbox (${BACKLOG_COLUMNS[kind]}) SELECT ${BACKLOG_COLUMNS[kind]} FROM backlog`,
  );
}

/** Pending rows left in the outbox of `kind`. */
export function pendingWhere(kind: TableKind): string {
  if (kind === 'peer') return 'processed_at IS NULL AND abandoned_at IS NULL';
  if (kind === 'seed') return 'sent_at IS NULL';
  return 'sent_at IS NULL AND dead_lettered_at IS NULL';
}

/** The consumers' business effect: a row per applied event, deliberately not unique. */
export const EFFECTS_DDL = `CREATE TABLE bench_effects (
  id BIGSERIAL PRIMARY KEY,
  event_id TEXT NOT NULL,
  applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`;

const HISTORY_PAYLOAD = JSON.stringify({
  orderId: '0f0e7c8a-3f7b-4a55-9a2c-6a1c2b3d4e5f',
  userId: 42,
  sku: 'sku-0042',
  quantity: 3,
  seq: 1,
  source: 'bench',
  customer: { email: 'user42@example.com', name: 'Customer 42' },
  shippingAddress: {
    street: '42 Prinsengracht',
    city: 'Amsterdam',
    postcode: '1016 GV',
    country: 'NL',
  },
  lines: [{ sku: 'sku-0042', quantity: 3, unitPriceCents: 1999 }],
  currency: 'EUR',
  placedAt: '2026-11-01T10:00:00.000Z',
});

/**
 * Writes `rows` history rows, 1M per statement, with the aggregate index dropped and
 * rebuilt afterwards (a bulk load's usual order; the table ends the same). Sent 8 days
 * ago unless `pending`. Ids continue after any rows already there.
 */
export async function history(
  pool: pg.Pool,
  rows: number,
  { pending }: { pending: boolean },
  ctx: BenchContext,
  table = 'outbox',
): Promise<void> {
  if (table === 'outbox') await pool.query('DROP INDEX IF EXISTS outbox_aggregate_idx');
  const chunk = 1_000_000;
  for (let from = 1; from <= rows; from += chunk) {
    const to = Math.min(rows, from + chunk - 1);
    await pool.query(
      `INSERT INTO ${table} (aggregate_type, aggregate_id, event_type, payload, headers, created_at, sent_at, topic)
       SELECT 'order', ${aggregateIdSql('i')}, 'OrderCreated', $1::jsonb, '{"correlationId":"c"}'::jsonb,
              now() - interval '8 days', ${pending ? 'NULL' : "now() - interval '8 days'"}, ${pending ? 'NULL' : "'orders.events'"}
       FROM generate_series($2::bigint, $3::bigint) AS s(i)`,
      [HISTORY_PAYLOAD, from, to],
    );
    if (rows > chunk) ctx.progress(`  ${fmt(to)} / ${fmt(rows)} rows`);
  }
  if (table === 'outbox') {
    await pool.query('CREATE INDEX outbox_aggregate_idx ON outbox (aggregate_type, aggregate_id)');
  }
  await pool.query(`VACUUM ANALYZE ${table}`);
}
