/**
 * @outbox/dev-stack: real local infrastructure without Docker (embedded PostgreSQL and a
 * KRaft Kafka broker), plus a process supervisor for the demo's services.
 */
import { stopConnect } from './connect.ts';
import { startKafka, stopKafka, kafkaRunning } from './kafka.ts';
import { probeKafka } from './kafka-probe.ts';
import { resolveContext, type StackOptions } from './options.ts';
import {
  pingPostgres,
  postgresRunning,
  redact,
  startPostgres,
  stopPostgres,
  type WalLevel,
} from './postgres.ts';
import { isPidAlive, terminate } from './process.ts';
import { readState, updateState } from './state.ts';
import { setTimeout as sleep } from 'node:timers/promises';

export type { StackOptions } from './options.ts';
export { Supervisor } from './supervisor.ts';
export { isPortFree } from './ports.ts';
export type { ServiceSpec, ServiceState, ServiceStatus, SupervisorOptions } from './supervisor.ts';

/** Where the stack's parts can be reached. */
export interface StackEndpoints {
  databaseUrl: string;
  kafkaBrokers: string[];
}

/** State of one part of the stack. */
export interface PartStatus {
  state: 'up' | 'down';
  /** Database URL (password redacted) or comma-separated brokers; null when unknown. */
  url: string | null;
  /** Pid of the local process, null when external or not running. */
  pid: number | null;
  /** True when the part comes from DATABASE_URL / KAFKA_BROKERS rather than the data dir. */
  external: boolean;
}

/**
 * Starts (or reuses) PostgreSQL and Kafka and returns their endpoints. Idempotent: parts that
 * stack.json records as running and that answer are reused, not restarted.
 */
export async function startStack(opts?: StackOptions): Promise<StackEndpoints> {
  const ctx = resolveContext(opts);
  // Sequential on purpose: both are memory-hungry on small machines and logs stay readable.
  const postgres = await startPostgres(ctx);
  const kafka = await startKafka(ctx);
  return { databaseUrl: postgres.url, kafkaBrokers: kafka.brokers };
}

/** Stops the locally started parts; external ones (env overrides) are left alone. */
export async function stopStack(opts?: StackOptions): Promise<void> {
  const ctx = resolveContext(opts);
  // One after the other: each rewrites stack.json (read-modify-write). Connect first:
  // dropping its replication slot needs PostgreSQL up.
  await stopConnect(opts);
  await stopKafka(ctx);
  await stopPostgres(ctx);
}

/** Reports whether each part is up and where. */
export async function stackStatus(
  opts?: StackOptions,
): Promise<{ postgres: PartStatus; kafka: PartStatus }> {
  const ctx = resolveContext(opts);
  const state = await readState(ctx.paths.stateFile);

  let postgres: PartStatus;
  if (ctx.externalDatabaseUrl) {
    const up = await pingPostgres(ctx.externalDatabaseUrl).catch(() => false);
    postgres = {
      state: up ? 'up' : 'down',
      url: redact(ctx.externalDatabaseUrl),
      pid: null,
      external: true,
    };
  } else {
    const up = await postgresRunning(state.postgres);
    const url = state.postgres ? redact(state.postgres.databaseUrl) : null;
    postgres = {
      state: up ? 'up' : 'down',
      url,
      pid: up ? (state.postgres?.pid ?? null) : null,
      external: false,
    };
  }

  let kafka: PartStatus;
  if (ctx.externalBrokers) {
    const up = await probeKafka(ctx.externalBrokers, false).catch(() => false);
    kafka = {
      state: up ? 'up' : 'down',
      url: ctx.externalBrokers.join(','),
      pid: null,
      external: true,
    };
  } else {
    const up = await kafkaRunning(state.kafka);
    const url = state.kafka ? state.kafka.brokers.join(',') : null;
    kafka = {
      state: up ? 'up' : 'down',
      url,
      pid: up ? (state.kafka?.pid ?? null) : null,
      external: false,
    };
  }
  return { postgres, kafka };
}

/** Options of {@link restartKafka}. */
export interface RestartOptions extends StackOptions {
  /** SIGKILL (default: a crash) or SIGTERM (a controlled shutdown). */
  signal?: NodeJS.Signals;
  /** How long the part stays down before it is started again (default 0). */
  downMs?: number;
}

/**
 * Stops the local broker and starts it again on the same port: the "broker restart"
 * fault of the soak. Refuses an external broker (KAFKA_BROKERS).
 */
export async function restartKafka(opts: RestartOptions = {}): Promise<string[]> {
  const ctx = resolveContext(opts);
  if (ctx.externalBrokers) throw new Error('restartKafka: the broker is external (KAFKA_BROKERS)');
  const state = (await readState(ctx.paths.stateFile)).kafka;
  if (state?.pid && isPidAlive(state.pid)) {
    await terminate(state.pid, {
      signal: opts.signal ?? 'SIGKILL',
      group: true,
      timeoutMs: 20_000,
    });
    await updateState(ctx.paths.stateFile, { kafka: { ...state, pid: null } });
  }
  if (opts.downMs) await sleep(opts.downMs);
  return (await startKafka(ctx)).brokers;
}

/** Options of {@link restartPostgres}. */
export interface PostgresRestartOptions extends StackOptions {
  /** 'immediate' (default: like a crash, recovery at start) or 'fast' (clean). */
  mode?: 'immediate' | 'fast';
  downMs?: number;
  /**
   * wal_level of the restarted server (default logical). 'replica' refuses to start
   * while a logical replication slot exists: drop it first (`stack down` does).
   */
  walLevel?: WalLevel;
}

/**
 * Stops the embedded PostgreSQL and starts it again on the same port: every client
 * loses its connections (57P01 / ECONNRESET) and must reconnect. Refuses DATABASE_URL.
 */
export async function restartPostgres(opts: PostgresRestartOptions = {}): Promise<string> {
  const ctx = resolveContext(opts);
  if (ctx.externalDatabaseUrl)
    throw new Error('restartPostgres: the database is external (DATABASE_URL)');
  const state = (await readState(ctx.paths.stateFile)).postgres;
  if (state?.pid && isPidAlive(state.pid)) {
    // SIGQUIT: immediate shutdown (no checkpoint, crash recovery on start); SIGINT: fast.
    await terminate(state.pid, {
      signal: opts.mode === 'fast' ? 'SIGINT' : 'SIGQUIT',
      timeoutMs: 30_000,
    });
    await updateState(ctx.paths.stateFile, { postgres: { ...state, pid: null } });
  }
  if (opts.downMs) await sleep(opts.downMs);
  return (await startPostgres(ctx, opts.walLevel)).url;
}

export { startCluster, KafkaCluster, type ClusterOptions, type ClusterNode } from './cluster.ts';
export { findRepoRoot, stackPaths, type StackPaths } from './paths.ts';
export {
  startConnect,
  stopConnect,
  connectState,
  connectorStatus,
  type ConnectOptions,
  type ConnectEndpoints,
  type ConnectorStatus,
} from './connect.ts';
export type { ConnectState } from './state.ts';
export { commandLine, UsageError, type CommandLine } from './command-line.ts';
export {
  ensurePrometheus,
  findPrometheus,
  prometheusConfig,
  prometheusTargets,
  startPrometheus,
  type PrometheusBinaries,
  type PrometheusOptions,
  type PrometheusTarget,
  type RunningPrometheus,
} from './prometheus.ts';
export type { WalLevel } from './postgres.ts';
