import type { Pool } from 'pg';
import { orderModes, type OrderMode } from '../config.ts';

const isMode = (value: unknown): value is OrderMode =>
  typeof value === 'string' && (orderModes as readonly string[]).includes(value);

/**
 * The mode of a new order: the request's choice, else the dashboard's `order_mode`
 * demo setting (a JSON string), else DEFAULT_MODE. Read per request: the setting is
 * switched at run time and one primary-key read is cheap next to the INSERT.
 */
export async function resolveMode(
  pool: Pool,
  requested: OrderMode | undefined,
  fallback: OrderMode,
): Promise<OrderMode> {
  if (requested) return requested;
  const { rows } = await pool.query<{ value: unknown }>(
    "SELECT value FROM demo_settings WHERE key = 'order_mode'",
  );
  const value = rows[0]?.value;
  return isMode(value) ? value : fallback;
}
