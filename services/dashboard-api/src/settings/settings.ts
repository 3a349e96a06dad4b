import type { Pool } from 'pg';
import { readRelayMode } from '@outbox/lab';
import { orderModeSchema, type OrderMode, type Settings } from '../contract.ts';

/** Mode for new orders when no `order_mode` setting exists (order-api's DEFAULT_MODE). */
const DEFAULT_MODE: OrderMode = 'outbox';

/**
 * The demo settings the dashboard switches: `order_mode` (order-api), `traffic_rate`
 * (the demo) and the relay (the demo's handover; @outbox/lab's relay-mode.ts).
 */
export async function readSettings(pool: Pool): Promise<Settings> {
  const [{ rows }, relay] = await Promise.all([
    pool.query<{ key: string; value: unknown }>(
      `SELECT key, value FROM demo_settings WHERE key IN ('order_mode', 'traffic_rate')`,
    ),
    readRelayMode(pool),
  ]);
  const byKey = new Map(rows.map((r) => [r.key, r.value]));
  const mode = orderModeSchema.safeParse(byKey.get('order_mode'));
  const rate = Number(byKey.get('traffic_rate') ?? 0);
  return {
    mode: mode.success ? mode.data : DEFAULT_MODE,
    trafficRate: Number.isFinite(rate) ? rate : 0,
    relay: { wanted: relay.wanted, active: relay.active.relay, phase: relay.phase },
  };
}

/** Upserts one setting; the table's trigger notifies order-api and the demo at once. */
export async function writeSetting(
  pool: Pool,
  key: 'order_mode' | 'traffic_rate',
  value: unknown,
): Promise<void> {
  await pool.query(
    `INSERT INTO demo_settings (key, value, updated_at) VALUES ($1, $2::jsonb, now())
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
    [key, JSON.stringify(value)],
  );
}
