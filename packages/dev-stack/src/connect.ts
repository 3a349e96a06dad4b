import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import {
  connectorProperties,
  HEARTBEAT_TABLE,
  LOG4J2_PROPERTIES,
  slotName,
  workerProperties,
  writeConnectFiles,
  type ConnectorSpec,
} from './connect-config.ts';
import { ensureConnectJars } from './connect-jars.ts';
import { startKafka } from './kafka.ts';
import { resolveContext, type StackContext, type StackOptions } from './options.ts';
import { pickPort } from './ports.ts';
import { startPostgres } from './postgres.ts';
import { isPidAlive, terminate } from './process.ts';
import { readState, updateState, type ConnectState } from './state.ts';
import { waitFor } from './wait.ts';

export interface ConnectOptions extends StackOptions {
  /** Schema whose outbox is captured (default public). */
  schema?: string;
  /** Topic of every outbox row (default orders.events, the demo's). */
  topic?: string;
  /** The connector's poll.interval.ms (default 50). */
  pollIntervalMs?: number;
}

export interface ConnectEndpoints {
  pid: number;
  restUrl: string;
  connector: string;
  slot: string;
}

/** Connect's REST answer for one connector. */
export interface ConnectorStatus {
  connector: { state: string };
  tasks: { id: number; state: string; trace?: string }[];
}

/**
 * Starts Kafka Connect standalone with the Debezium outbox connector (the seed's
 * alternative relay) on the stack's PostgreSQL and broker, and resolves once the
 * connector's task is RUNNING. Reuses a Connect that runs for the same schema and
 * topic. Needs `wal_level = logical`; the embedded PostgreSQL has it.
 */
export async function startConnect(opts: ConnectOptions = {}): Promise<ConnectEndpoints> {
  const ctx = resolveContext(opts);
  const schema = opts.schema ?? 'public';
  const topic = opts.topic ?? 'orders.events';
  const postgres = await startPostgres(ctx);
  const kafka = await startKafka(ctx);
  const previous = (await readState(ctx.paths.stateFile)).connect;
  if (previous && isPidAlive(previous.pid)) {
    if (previous.schema === schema && previous.topic === topic) {
      ctx.log(`connect: already running (pid ${previous.pid}) for ${schema}.outbox`);
      return endpoints(previous);
    }
    await stopConnect(opts);
  }
  await assertLogicalDecoding(postgres.url);
  const paths = await ensureConnectJars(ctx);
  const name = `outbox-cdc-${schema.replace(/_/g, '-')}`;
  const url = new URL(postgres.url);
  const spec: ConnectorSpec = {
    name,
    schema,
    topic,
    pollIntervalMs: opts.pollIntervalMs ?? 50,
    database: {
      host: url.hostname,
      port: Number(url.port || 5432),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      dbname: url.pathname.slice(1),
    },
  };
  await createPublication(postgres.url, spec);
  await mkdir(paths.dir, { recursive: true });
  const restPort = await pickPort(previous?.restPort);
  const offsetsFile = join(paths.dir, `offsets-${slotName(spec)}.dat`);
  const files = await writeConnectFiles(paths.dir, {
    'worker.properties': workerProperties({
      brokers: kafka.brokers,
      restPort,
      offsetsFile,
      pluginsDir: paths.pluginsDir,
    }),
    'connector.properties': connectorProperties(spec),
    'log4j2.properties': LOG4J2_PROPERTIES,
  });
  const pid = spawnConnect(ctx, paths.libsDir, files, paths.log);
  const state: ConnectState = {
    pid,
    restPort,
    schema,
    topic,
    connector: name,
    slot: slotName(spec),
    offsetsFile,
    databaseUrl: postgres.url,
  };
  await updateState(ctx.paths.stateFile, { connect: state });
  ctx.log(`connect: starting (pid ${pid}), REST on 127.0.0.1:${restPort}, waiting for the task`);
  await waitFor(
    async () => {
      const status = await connectorStatus(state);
      const task = status?.tasks[0];
      if (task?.state === 'FAILED')
        throw new Error(`task FAILED: ${task.trace?.split('\n')[0] ?? 'no trace'}`);
      return task?.state === 'RUNNING';
    },
    {
      what: 'the Debezium connector task to be RUNNING',
      timeoutMs: 120_000,
      intervalMs: 500,
      hint: `see ${paths.log}`,
      abort: () => (isPidAlive(pid) ? undefined : 'Kafka Connect exited during start-up'),
    },
  );
  ctx.log(`connect: running (pid ${pid}): ${schema}.outbox → ${topic}, slot ${state.slot}`);
  return endpoints(state);
}

/**
 * Stops Connect (SIGTERM, SIGKILL after 20 s) and drops its replication slot, its
 * publication and its offsets file. A slot left behind holds WAL for ever: the
 * server cannot recycle a segment the slot has not confirmed.
 *
 * `keepSlot`: Connect is only down (an outage, on purpose). The slot keeps the WAL
 * since its confirmed position, the offsets file and the recorded state stay, and the
 * next startConnect resumes from them.
 */
export async function stopConnect(
  opts: StackOptions = {},
  { keepSlot = false }: { keepSlot?: boolean } = {},
): Promise<void> {
  const ctx = resolveContext(opts);
  const state = (await readState(ctx.paths.stateFile)).connect;
  if (!state) return;
  if (isPidAlive(state.pid)) {
    await terminate(state.pid, { signal: 'SIGTERM', group: true, timeoutMs: 20_000 });
    ctx.log(`connect: stopped (pid ${state.pid})${keepSlot ? `, slot ${state.slot} kept` : ''}`);
  }
  if (keepSlot) return;
  await dropSlot(ctx, state).catch((error: unknown) =>
    ctx.log(`connect: could not drop slot ${state.slot}: ${(error as Error).message}`),
  );
  await rm(state.offsetsFile, { force: true });
  await updateState(ctx.paths.stateFile, { connect: undefined });
}

/** Connect's status of the recorded connector, or undefined when it does not answer. */
export async function connectorStatus(
  state: Pick<ConnectState, 'restPort' | 'connector'>,
): Promise<ConnectorStatus | undefined> {
  try {
    const res = await fetch(
      `http://127.0.0.1:${state.restPort}/connectors/${state.connector}/status`,
      { signal: AbortSignal.timeout(2_000) },
    );
    return res.ok ? ((await res.json()) as ConnectorStatus) : undefined;
  } catch {
    return undefined;
  }
}

/** The running Connect of this data dir, if any. */
export async function connectState(opts: StackOptions = {}): Promise<ConnectState | undefined> {
  const state = (await readState(resolveContext(opts).paths.stateFile)).connect;
  return state && isPidAlive(state.pid) ? state : undefined;
}

function endpoints(state: ConnectState): ConnectEndpoints {
  return {
    pid: state.pid,
    restUrl: `http://127.0.0.1:${state.restPort}`,
    connector: state.connector,
    slot: state.slot,
  };
}

function spawnConnect(
  ctx: StackContext,
  libsDir: string,
  files: Record<string, string>,
  log: string,
): number {
  const fd = openSync(log, 'a');
  try {
    const child = spawn(
      'java',
      [
        '-Xmx512m',
        `-Dlog4j2.configurationFile=${files['log4j2.properties']}`,
        '-cp',
        `${libsDir}/*`,
        'org.apache.kafka.connect.cli.ConnectStandalone',
        files['worker.properties']!,
        files['connector.properties']!,
      ],
      { detached: true, stdio: ['ignore', fd, fd], env: ctx.env },
    );
    child.unref();
    if (!child.pid) throw new Error('could not spawn java for Kafka Connect');
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Fails with what to change when the server cannot decode its WAL logically. */
async function assertLogicalDecoding(url: string): Promise<void> {
  const level = await withClient(url, async (c) => (await c.query('SHOW wal_level')).rows[0]);
  if (level?.wal_level !== 'logical')
    throw new Error(
      `Debezium needs wal_level = logical, and this PostgreSQL has ${String(level?.wal_level)}: ` +
        "run ALTER SYSTEM SET wal_level = 'logical' (and check max_replication_slots and " +
        'max_wal_senders ≥ 1), then restart the server',
    );
}

/**
 * The publication (inserts only) of the outbox and the heartbeat table, and that table.
 * Debezium's heartbeat query writes it under the connector's login, which owns it here.
 */
async function createPublication(url: string, spec: ConnectorSpec): Promise<void> {
  const name = pg.escapeIdentifier(slotName(spec));
  const outbox = `${pg.escapeIdentifier(spec.schema)}.outbox`;
  const beats = `${pg.escapeIdentifier(spec.schema)}.${HEARTBEAT_TABLE}`;
  await withClient(url, async (c) => {
    await c.query(`CREATE TABLE IF NOT EXISTS ${beats} (beat_at timestamptz NOT NULL)`);
    const found = await c.query<{ tables: string[] }>(
      `SELECT ARRAY(SELECT tablename::text FROM pg_publication_tables t WHERE t.pubname = p.pubname) AS tables
         FROM pg_publication p WHERE p.pubname = $1`,
      [slotName(spec)],
    );
    const tables = found.rows[0]?.tables;
    if (!tables)
      await c.query(
        `CREATE PUBLICATION ${name} FOR TABLE ${outbox}, ${beats} WITH (publish = 'insert')`,
      );
    // A publication from before the heartbeat table (an older dev-stack) gets it added.
    else if (!tables.includes(HEARTBEAT_TABLE))
      await c.query(`ALTER PUBLICATION ${name} ADD TABLE ${beats}`);
  });
}

async function dropSlot(ctx: StackContext, state: ConnectState): Promise<void> {
  await withClient(state.databaseUrl, async (c) => {
    // The walsender of a just-killed Connect may linger for a moment: end it, then drop.
    await c.query(
      'SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NOT NULL',
      [state.slot],
    );
    await waitFor(
      async () => {
        const { rows } = await c.query<{ active: boolean }>(
          'SELECT active FROM pg_replication_slots WHERE slot_name = $1',
          [state.slot],
        );
        if (rows.length === 0) return true;
        if (rows[0]!.active) return false;
        await c.query('SELECT pg_drop_replication_slot($1)', [state.slot]);
        return true;
      },
      { what: `replication slot ${state.slot} to be released`, timeoutMs: 15_000, intervalMs: 200 },
    );
    await c.query(`DROP PUBLICATION IF EXISTS ${pg.escapeIdentifier(state.slot)}`);
  });
  ctx.log(`connect: dropped slot and publication ${state.slot}`);
}
