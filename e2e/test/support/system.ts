import {
  auditResponseSchema,
  resetResponseSchema,
  settingsSchema,
  stateResponseSchema,
} from '@outbox/dashboard-api/contract';
import pg from 'pg';
import { inject } from 'vitest';

async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(new URL(path, inject('dashboardUrl')), {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/**
 * Between specs: traffic off, outbox mode, the polling relay, every failure point disarmed, the data
 * emptied (dashboard-api's own reset). Done through the API the page uses.
 */
export async function resetSystem(): Promise<void> {
  settingsSchema.parse(await call('PUT', '/api/traffic', { rate: 0 }));
  settingsSchema.parse(await call('PUT', '/api/mode', { mode: 'outbox' }));
  // The polling relay, once the demo has carried a switch back out (Connect stopped).
  settingsSchema.parse(await call('PUT', '/api/relay', { relay: 'polling' }));
  for (let waited = 0; ; waited += 500) {
    const { settings } = stateResponseSchema.parse(await call('GET', '/api/state'));
    if (settings.relay.active === 'polling' && settings.relay.phase === null) break;
    if (waited > 90_000) throw new Error(`relay still ${JSON.stringify(settings.relay)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  resetResponseSchema.parse(await call('POST', '/api/reset'));
  const state = stateResponseSchema.parse(await call('GET', '/api/state'));
  const armed = state.failurePoints.filter((p) => p.active).map((p) => p.name);
  if (armed.length > 0) throw new Error(`still armed after reset: ${armed.join(', ')}`);
}

/** A pool on the system's schema, for the checks a page cannot show and for setup rows. */
export function systemPool(): pg.Pool {
  const pool = new pg.Pool({
    connectionString: inject('databaseUrl'),
    options: `-c search_path=${inject('schema')}`,
    max: 2,
  });
  pool.on('error', () => undefined);
  return pool;
}

/** core's audit() through dashboard-api (full scans: once per spec, not in a loop). */
export async function auditNow() {
  return auditResponseSchema.parse(await call('GET', '/api/audit'));
}
