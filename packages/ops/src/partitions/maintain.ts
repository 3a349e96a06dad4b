import { outboxState } from '@outbox/core';
import pg from 'pg';
import type { Pool } from 'pg';
import { isPartitioned, partitions } from './catalog.ts';
import { dayOf, dayOfName, daysBetween } from './days.ts';
import { createDayPartition, outboxReloptions } from './enable.ts';

export interface MaintainOptions {
  /** Partitions whose whole day is older than this many seconds are dropped. */
  retentionSeconds: number;
  /** Daily partitions kept ready beyond today (default 7). */
  daysAhead?: number;
  now?: Date;
}

export interface MaintainResult {
  created: string[];
  dropped: string[];
  /** Partitions past retention that stay, and why (rows never sent). */
  kept: { name: string; reason: string }[];
  /** Rows in the DEFAULT partition: > 0 means the job ran late; they are relayed all the same. */
  defaultRows: number;
}

const q = pg.escapeIdentifier;

/**
 * The daily job of the partitioned layout: create the partitions of the next days, and
 * drop those past retention: `DROP TABLE` of one day takes a moment whatever the number
 * of rows, where a DELETE would touch each (the seed: "partitioning by day is faster
 * than DELETE of millions of rows"). A partition still holding a row that was never
 * sent (pending, dead-lettered) is kept: losing an event is never a cleanup's call.
 * Two maintainers at once: the second one returns without doing anything.
 */
export async function maintainPartitions(
  pool: Pool,
  options: MaintainOptions,
): Promise<MaintainResult> {
  const now = options.now ?? new Date();
  const result: MaintainResult = { created: [], dropped: [], kept: [], defaultRows: 0 };
  const client = await pool.connect();
  try {
    if (!(await isPartitioned(client))) {
      throw new Error('the outbox is not partitioned: run `ops partition enable` first');
    }
    const locked = await client.query<{ ok: boolean }>(
      "SELECT pg_try_advisory_lock(hashtext('outbox_partitions.' || current_schema())) AS ok",
    );
    if (!locked.rows[0]?.ok) return result;
    try {
      await client.query("SET lock_timeout = '5s'");
      const existing = new Set((await partitions(client)).map((p) => p.name));
      const reloptions = await outboxReloptions(client, 'outbox_default');
      const ahead = new Date(now.getTime() + (options.daysAhead ?? 7) * 86_400_000);
      for (const day of daysBetween(now, ahead)) {
        if (existing.has(day.name)) continue;
        // Creating a partition moves nothing out of DEFAULT: PostgreSQL refuses while the
        // default holds rows of that day, and they are fine where they are.
        const stray = await client.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM outbox_default WHERE created_at >= $1 AND created_at < $2',
          [day.from, day.to],
        );
        if ((stray.rows[0]?.n ?? 0) > 0) {
          result.kept.push({
            name: day.name,
            reason: `not created: ${stray.rows[0]?.n} rows of that day in outbox_default`,
          });
          continue;
        }
        await createDayPartition(client, day, reloptions);
        result.created.push(day.name);
      }

      const cutoff = now.getTime() - options.retentionSeconds * 1_000;
      for (const p of await partitions(client)) {
        const day = dayOfName(p.name);
        if (!day || day.to.getTime() > cutoff || day.name === dayOf(now).name) continue;
        // Checked and dropped under the partition's lock: nothing can change in between.
        await client.query('BEGIN');
        try {
          await client.query(`LOCK TABLE ${q(p.name)} IN ACCESS EXCLUSIVE MODE`);
          const unsent = await client.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM ${q(p.name)} WHERE ${outboxState('unsent')}`,
          );
          const n = unsent.rows[0]?.n ?? 0;
          if (n > 0) {
            result.kept.push({
              name: p.name,
              reason: `${n} rows never sent (pending or dead-lettered)`,
            });
          } else {
            await client.query(`DROP TABLE ${q(p.name)}`);
            result.dropped.push(p.name);
          }
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
      }
      const inDefault = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM outbox_default',
      );
      result.defaultRows = inDefault.rows[0]?.n ?? 0;
    } finally {
      await client.query('RESET lock_timeout').catch(() => undefined);
      await client
        .query("SELECT pg_advisory_unlock(hashtext('outbox_partitions.' || current_schema()))")
        .catch(() => undefined);
    }
  } finally {
    client.release();
  }
  return result;
}
