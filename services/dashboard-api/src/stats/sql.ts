/**
 * SQL fragments and helpers the stats queries share. Values are always parameters.
 */
export interface Query {
  text: string;
  values: unknown[];
}

/**
 * `expr` (text) as a uuid, or NULL when it is not one: lets `orders.id = …` use the
 * primary key instead of comparing `orders.id::text` row by row (a full scan).
 */
export const asUuid = (expr: string): string =>
  `(CASE WHEN ${expr} ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN (${expr})::uuid END)`;

/**
 * Rows of an append-only `table` not counted yet: the gaps below the watermark, then
 * the next `limit` rows above it in id order. Two branches on purpose: with
 * `id > $1 OR id = ANY($2)` the planner may walk the whole primary key from its start.
 */
export function tailRows(table: string, columns: string, limitParam: string): string {
  return `(SELECT ${columns} FROM ${table} WHERE id = ANY($2::bigint[]))
          UNION ALL
          (SELECT ${columns} FROM ${table} WHERE id > $1::bigint ORDER BY id LIMIT ${limitParam})`;
}

/** Condition: row `alias` was counted before (below the watermark and not a gap). */
export const countedBefore = (alias: string): string =>
  `${alias}.id <= $1::bigint AND ${alias}.id <> ALL($2::bigint[])`;
