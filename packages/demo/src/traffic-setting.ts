import pg from 'pg';
import type { TrafficGenerator } from './traffic.ts';

/**
 * Drives `traffic` at the `traffic_rate` demo setting, now and whenever it changes
 * (demo_settings notifies on `failure_points.<schema>`), so the dashboard can set the
 * rate with an UPDATE. The LISTEN connection is re-opened when PostgreSQL drops it (a
 * restart), and the setting is read again then: a change made meanwhile is not missed.
 * Returns the function that stops following.
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
    // No setting (yet, or after a reset): keep the rate we have. The channel also
    // carries failure-point changes, which must not stop the traffic.
    if (rows.length === 0) return;
    const rate = Number(rows[0]?.value);
    if (Number.isFinite(rate) && rate !== traffic.currentRate) {
      traffic.setRate(rate);
      log(`traffic     ${traffic.currentRate} orders/s`);
    }
  };
  const reapply = () => {
    apply().catch((error: Error) => log(`traffic setting: ${error.message}`));
  };

  let stopped = false;
  let listener: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const listen = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: db.connectionString });
    listener = client;
    client.on('notification', reapply);
    client.on('error', (error) => {
      log(`traffic setting listener: ${error.message}; reconnecting`);
      client.removeAllListeners('notification');
      client.end().catch(() => undefined);
      schedule(1_000);
    });
    await client.connect();
    await client.query(`LISTEN ${pg.escapeIdentifier(`failure_points.${db.schema}`)}`);
  };
  const schedule = (delayMs: number) => {
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      listen()
        .then(reapply)
        .catch((error: Error) => {
          log(`traffic setting listener: ${error.message}; retrying`);
          schedule(Math.min(delayMs * 2, 10_000));
        });
    }, delayMs);
  };

  await listen();
  await apply();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    listener?.removeAllListeners('notification');
    await listener?.end().catch(() => undefined);
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
