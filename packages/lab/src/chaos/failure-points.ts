import pg from 'pg';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { silentLogger } from '@outbox/core';

import { FAILURE_POINT_NAMES, type FailurePointName } from './names.ts';

export { FailurePoint, FAILURE_POINT_NAMES, type FailurePointName } from './names.ts';

export type FailureMode = 'off' | 'once' | 'times' | 'on';

export interface FailurePointState {
  name: string;
  mode: FailureMode;
  remaining: number;
  params: Record<string, unknown>;
  fired: number;
  updatedAt: Date;
}

export interface ArmOptions {
  mode: FailureMode;
  /** For mode 'times': how many times it fires. */
  times?: number;
  params?: Record<string, unknown>;
}

interface Row {
  name: string;
  mode: FailureMode;
  remaining: number;
  params: Record<string, unknown>;
  fired: number;
  updated_at: Date;
}

const toState = (r: Row): FailurePointState => ({
  name: r.name,
  mode: r.mode,
  remaining: r.remaining,
  params: r.params,
  fired: r.fired,
  updatedAt: r.updated_at,
});

/**
 * Failure points shared by all replicas through PostgreSQL. Each process keeps a
 * cache refreshed on NOTIFY (and every `refreshMs` as a backstop), so a point that is
 * off costs nothing on the hot path; one that is armed is consumed atomically in the
 * database, so "once" fires once across all replicas.
 */
export interface FailurePointsOptions {
  /** Where to LISTEN for changes (none: the 1 s poll alone). */
  listen?: pg.ClientConfig;
  refreshMs?: number;
  log?: Logger;
}

export class FailurePoints {
  private cache = new Map<string, FailurePointState>();
  private listener: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly log: Logger;

  constructor(
    private readonly pool: Pool,
    private readonly options: FailurePointsOptions = {},
  ) {
    this.log = options.log ?? silentLogger;
  }

  /** Loads the cache and starts following changes. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(
      () => void this.refresh().catch(() => undefined),
      this.options.refreshMs ?? 1_000,
    );
    this.timer.unref();
    if (this.options.listen) {
      const client = new pg.Client(this.options.listen);
      client.on('error', (error) =>
        this.log.warn({ err: error }, 'failure-point listener lost; polling only'),
      );
      client.on('notification', () => void this.refresh().catch(() => undefined));
      try {
        await client.connect();
        const { rows } = await client.query<{ s: string }>('SELECT current_schema() AS s');
        await client.query(
          `LISTEN ${pg.escapeIdentifier(`failure_points.${rows[0]?.s ?? 'public'}`)}`,
        );
        this.listener = client;
      } catch (error) {
        this.log.warn({ err: error }, 'failure-point listener could not start; polling only');
        await client.end().catch(() => undefined);
      }
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.listener?.end().catch(() => undefined);
    this.listener = undefined;
  }

  async refresh(): Promise<FailurePointState[]> {
    const { rows } = await this.pool.query<Row>('SELECT * FROM failure_points ORDER BY name');
    this.cache = new Map(rows.map((r) => [r.name, toState(r)]));
    return rows.map(toState);
  }

  /** Arms (or disarms, with mode 'off') a failure point. */
  async arm(name: FailurePointName, options: ArmOptions): Promise<FailurePointState> {
    const remaining =
      options.mode === 'times' ? Math.max(1, options.times ?? 1) : options.mode === 'once' ? 1 : 0;
    const { rows } = await this.pool.query<Row>(
      `INSERT INTO failure_points (name, mode, remaining, params, updated_at)
       VALUES ($1, $2, $3, $4::jsonb, now())
       ON CONFLICT (name) DO UPDATE SET mode = EXCLUDED.mode, remaining = EXCLUDED.remaining,
         params = EXCLUDED.params, updated_at = now()
       RETURNING *`,
      [name, options.mode, remaining, JSON.stringify(options.params ?? {})],
    );
    const state = toState(rows[0] as Row);
    this.cache.set(name, state);
    return state;
  }

  /** The cached state (no query). */
  state(name: FailurePointName): FailurePointState | undefined {
    return this.cache.get(name);
  }

  /** A switch-like point (inbox off, unsharded, outage window): is it on now? No query. */
  isActive(name: FailurePointName, now = Date.now()): boolean {
    const s = this.cache.get(name);
    if (!s || s.mode === 'off') return false;
    const until = typeof s.params.until === 'number' ? s.params.until : undefined;
    return until === undefined || now < until;
  }

  /**
   * At a failure point in the code: should the fault happen now? Consumes one shot of
   * a 'once'/'times' point atomically. Returns the point's params when it fires.
   */
  async fire(name: FailurePointName): Promise<Record<string, unknown> | undefined> {
    const cached = this.cache.get(name);
    if (!cached || cached.mode === 'off') return undefined;
    const { rows } = await this.pool.query<Row>(
      `UPDATE failure_points SET
         fired = fired + 1,
         remaining = CASE WHEN mode IN ('once', 'times') THEN remaining - 1 ELSE remaining END,
         mode = CASE WHEN mode IN ('once', 'times') AND remaining <= 1 THEN 'off' ELSE mode END,
         updated_at = now()
       WHERE name = $1 AND mode <> 'off'
       RETURNING *`,
      [name],
    );
    const row = rows[0];
    if (!row) {
      this.cache.set(name, { ...cached, mode: 'off' });
      return undefined;
    }
    this.cache.set(name, toState(row));
    return row.params;
  }

  /** Every failure point, armed or not. */
  async list(): Promise<FailurePointState[]> {
    const known = await this.refresh();
    const byName = new Map(known.map((s) => [s.name, s]));
    return FAILURE_POINT_NAMES.map(
      (name) =>
        byName.get(name) ?? {
          name,
          mode: 'off',
          remaining: 0,
          params: {},
          fired: 0,
          updatedAt: new Date(0),
        },
    );
  }
}
