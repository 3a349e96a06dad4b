import type { ClientBase, Pool } from 'pg';

/** Whether `outbox` in the current schema is a partitioned table. */
export async function isPartitioned(db: Pool | ClientBase): Promise<boolean> {
  const { rows } = await db.query<{ kind: string }>(
    `SELECT c.relkind::text AS kind FROM pg_class c
     WHERE c.oid = to_regclass(quote_ident(current_schema()) || '.outbox')`,
  );
  return rows[0]?.kind === 'p';
}

export interface PartitionInfo {
  name: string;
  /** The FOR VALUES clause as PostgreSQL prints it ('DEFAULT' for the default one). */
  bound: string;
  isDefault: boolean;
}

/** The outbox's partitions, by name. */
export async function partitions(db: Pool | ClientBase): Promise<PartitionInfo[]> {
  const { rows } = await db.query<{ name: string; bound: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = to_regclass(quote_ident(current_schema()) || '.outbox')
     ORDER BY c.relname`,
  );
  return rows.map((r) => ({ ...r, isDefault: r.bound === 'DEFAULT' }));
}
