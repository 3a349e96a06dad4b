import { fileURLToPath } from 'node:url';
import { loadMigrations, migrate } from '@outbox/core';
import type { Pool } from 'pg';

const labDir = fileURLToPath(new URL('../sql/', import.meta.url));

/**
 * Core's migrations and the lab's (the demo's tables: orders, inventory, reservations,
 * consumer_deliveries, failure_points, demo_settings, demo_processes), applied in one
 * version order through core's `migrate`. The lab's versions (000002, 000004) come from
 * the same sequence as core's, recorded in the same `outbox_migrations` table, so a
 * database migrated before the split is already up to date; a new lab migration takes
 * the next free number of both folders.
 */
export async function migrateLab(pool: Pool): Promise<number[]> {
  const all = [...(await loadMigrations()), ...(await loadMigrations(labDir))];
  const versions = new Set<number>();
  for (const m of all) {
    if (versions.has(m.version)) throw new Error(`migration version ${m.version} is taken twice`);
    versions.add(m.version);
  }
  return migrate(
    pool,
    all.sort((a, b) => a.version - b.version),
  );
}
