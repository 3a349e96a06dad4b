import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';

/** What the exposure helpers need of a test database. */
interface Db {
  pool: pg.Pool;
  databaseUrl: string;
}

/** A login role with a password nobody else uses, so any copy of it in the output is a leak. */
export async function secretRole(db: Db): Promise<{ role: string; secret: string; url: string }> {
  const role = `sec_${randomBytes(4).toString('hex')}`;
  // '@' and '/' must be percent-encoded in a URL: the masking must catch both spellings.
  const secret = `S3cr@t/${randomBytes(9).toString('hex')}`;
  await db.pool.query(`CREATE ROLE ${role} LOGIN SUPERUSER PASSWORD ${pg.escapeLiteral(secret)}`);
  const url = new URL(db.databaseUrl);
  url.username = role;
  url.password = encodeURIComponent(secret);
  return { role, secret, url: url.toString() };
}

/** Drops a role made by {@link secretRole}, ending its sessions first. */
export async function dropRole(db: Db, role: string): Promise<void> {
  await db.pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [
    role,
  ]);
  await db.pool.query(`DROP ROLE IF EXISTS ${role}`);
}

/** Local addresses listening on `port`, from the kernel's own table (IPv4 and IPv6). */
export function listenersOn(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((f) => f[3] === '0A' && f[1]?.endsWith(`:${hexPort}`))
      .map((f) => f[1]!.split(':')[0]!),
  );
}
