import pg from 'pg';
import { pgConfig } from '@outbox/core';
import { baseConfigSchema, parseConfig, migrateLab } from '@outbox/lab';
import { seedInventory } from './seed.ts';

/**
 * Migrates and seeds the demo inventory, then exits: the one-shot `seed` service of
 * docker-compose.yml (the demo command does the same in-process). Reads DATABASE_URL
 * and DATABASE_SCHEMA.
 */
const config = parseConfig(
  baseConfigSchema.pick({ DATABASE_URL: true, DATABASE_SCHEMA: true }),
  process.env,
);
const pool = new pg.Pool(pgConfig(config));
try {
  await pool.query(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(config.DATABASE_SCHEMA)}`);
  const applied = await migrateLab(pool);
  await seedInventory(pool);
  console.log(`migrated (${applied.length} applied) and seeded ${config.DATABASE_SCHEMA}`);
} finally {
  await pool.end();
}
