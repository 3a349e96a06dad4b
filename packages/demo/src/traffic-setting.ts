import pg from 'pg';
import type { TrafficGenerator } from './traffic.ts';

/**
 * Drives `traffic` at the `traffic_rate` demo setting, now and whenever it changes
 * (demo_settings notifies on `failure_points.<schema>`), so the dashboard can set the
 * rate with an UPDATE. Returns the function that stops following.
 */
export async function followTrafficRate(
  db: { connectionString: string; schema: string },
  pool: pg.Pool,
  traffic: TrafficGenerator,
  log: (line: string) => void,
): Promise<() => Promise<void>> {
  const apply = async () => {
    const { rows } = await pool.query<{ value: unknown }>(
      "SELECT value FROM demo_settings WHERE key = 'traffic_rate'",
    );
    const rate = Number(rows[0]?.value ?? 0);
    if (Number.isFinite(rate) && rate !== traffic.currentRate) {
      traffic.setRate(rate);
      log(`traffic     ${traffic.currentRate} orders/s`);
    }
  };
  const listener = new pg.Client({ connectionString: db.connectionString });
  listener.on('error', (error) => log(`traffic setting listener: ${error.message}`));
  await listener.connect();
  await listener.query(`LISTEN ${pg.escapeIdentifier(`failure_points.${db.schema}`)}`);
  listener.on('notification', () => {
    apply().catch((error: Error) => log(`traffic setting: ${error.message}`));
  });
  await apply();
  return async () => {
    listener.removeAllListeners('notification');
    await listener.end().catch(() => undefined);
  };
}

/** Sets the `traffic_rate` demo setting (what the dashboard does). */
export async function setTrafficRate(pool: pg.Pool, rate: number): Promise<void> {
  await pool.query(
    `INSERT INTO demo_settings (key, value) VALUES ('traffic_rate', to_jsonb($1::float8))
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
    [rate],
  );
}
