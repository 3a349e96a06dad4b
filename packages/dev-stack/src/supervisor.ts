import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { BACKOFF, backoffDelay } from './backoff.ts';
import { isPidAlive } from './process.ts';

/** A process to keep running. */
export interface ServiceSpec {
  name: string;
  command: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** 'restarting' = exited unexpectedly, waiting for the backoff delay. */
export type ServiceState = 'up' | 'down' | 'restarting';

/** Snapshot of one supervised process. */
export interface ServiceStatus {
  name: string;
  state: ServiceState;
  pid: number | null;
  restarts: number;
  /** Epoch ms of the current run's start, null when not running. */
  startedAt: number | null;
}

/** Construction options of {@link Supervisor}. */
export interface SupervisorOptions {
  /** Each service writes `<logDir>/<name>.log`. */
  logDir: string;
  log?: (line: string) => void;
  /** Called on every state change of a service. */
  onChange?: (status: ServiceStatus) => void;
  /** Grace period between SIGTERM and SIGKILL in stop(); default 10 s. */
  stopTimeoutMs?: number;
}

interface Service {
  spec: ServiceSpec;
  status: ServiceStatus;
  child: ChildProcess | null;
  logStream: WriteStream;
  quickFailures: number;
  timer: NodeJS.Timeout | null;
  exited: Promise<void>;
}

/**
 * Runs child processes, restarts them with exponential backoff when they exit on their own,
 * and stops them all on request. Children lead their own process group so that stop() also
 * reaches grandchildren (e.g. the node process behind a `tsx` wrapper).
 */
export class Supervisor {
  private readonly services = new Map<string, Service>();
  private readonly listeners = new Set<(status: ServiceStatus) => void>();
  private readonly log: (line: string) => void;
  private stopping: Promise<void> | null = null;

  constructor(private readonly opts: SupervisorOptions) {
    this.log = opts.log ?? ((line) => process.stderr.write(`[supervisor] ${line}\n`));
    if (opts.onChange) this.listeners.add(opts.onChange);
    mkdirSync(opts.logDir, { recursive: true });
  }

  /** Subscribes to status changes; returns the unsubscribe function. */
  onChange(listener: (status: ServiceStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts a service and keeps it running until stop(). Names must be unique. */
  add(spec: ServiceSpec): ServiceStatus {
    if (this.stopping) throw new Error('Supervisor is stopped');
    if (this.services.has(spec.name)) throw new Error(`Service ${spec.name} already added`);
    const service: Service = {
      spec,
      status: { name: spec.name, state: 'down', pid: null, restarts: 0, startedAt: null },
      child: null,
      logStream: createWriteStream(join(this.opts.logDir, `${spec.name}.log`), { flags: 'a' }),
      quickFailures: 0,
      timer: null,
      exited: Promise.resolve(),
    };
    this.services.set(spec.name, service);
    this.launch(service);
    return { ...service.status };
  }

  /** Current state of every service, in the order they were added. */
  status(): ServiceStatus[] {
    return [...this.services.values()].map((s) => ({ ...s.status }));
  }

  /** SIGTERMs every service, SIGKILLs stragglers after the timeout. Same promise every call. */
  stop(): Promise<void> {
    this.stopping ??= this.stopAll();
    return this.stopping;
  }

  /**
   * SIGKILLs every service's process group at once and restarts none: for a caller
   * that must exit now (a second Ctrl-C) and may not leave its services running.
   * Synchronous, so that it is done before process.exit().
   */
  killNow(): void {
    this.stopping ??= Promise.resolve();
    for (const service of this.services.values()) {
      if (service.timer) clearTimeout(service.timer);
      service.timer = null;
      const pid = service.child?.pid;
      if (pid !== undefined && isPidAlive(pid)) signalGroup(pid, 'SIGKILL');
    }
  }

  private async stopAll(): Promise<void> {
    const timeoutMs = this.opts.stopTimeoutMs ?? 10_000;
    await Promise.all(
      [...this.services.values()].map(async (service) => {
        if (service.timer) clearTimeout(service.timer);
        service.timer = null;
        const pid = service.child?.pid;
        if (service.child && isPidAlive(pid)) {
          signalGroup(pid, 'SIGTERM');
          const killer = setTimeout(() => signalGroup(pid, 'SIGKILL'), timeoutMs);
          await service.exited;
          clearTimeout(killer);
        }
        this.update(service, { state: 'down', pid: null, startedAt: null });
        await new Promise<void>((resolve) => service.logStream.end(resolve));
      }),
    );
  }

  private launch(service: Service): void {
    const { spec } = service;
    service.timer = null;
    const startedAt = Date.now();
    service.logStream.write(
      `--- ${new Date(startedAt).toISOString()} starting ${spec.command} ${(spec.args ?? []).join(' ')}\n`,
    );
    const child = spawn(spec.command, spec.args ?? [], {
      cwd: spec.cwd,
      env: spec.env ?? process.env,
      // fd 3 is an IPC channel, only for the child to see it close: when this process
      // dies, however it dies (the wrappers of `npm run demo` SIGKILL it), the channel
      // closes and a service of the lab's shell stops by itself (onShutdown), instead of
      // running on in its own process group, out of reach of the terminal's Ctrl-C.
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      detached: true,
    });
    service.child = child;
    child.stdout?.pipe(service.logStream, { end: false });
    child.stderr?.pipe(service.logStream, { end: false });
    service.exited = new Promise<void>((resolve) => {
      let done = false;
      const finish = (how: string): void => {
        if (done) return;
        done = true;
        resolve();
        this.onExit(service, startedAt, how);
      };
      child.once('exit', (code, signal) => finish(signal ? `signal ${signal}` : `code ${code}`));
      // Spawn failures (ENOENT...) emit 'error' without 'exit': treat them as a crash.
      child.once('error', (err) => finish(`error ${err.message}`));
    });
    this.update(service, { state: 'up', pid: child.pid ?? null, startedAt });
  }

  private onExit(service: Service, startedAt: number, how: string): void {
    service.logStream.write(`--- ${new Date().toISOString()} exited (${how})\n`);
    service.child = null;
    if (this.stopping) return;
    // A long healthy run means the next crash is a new incident: start backoff from scratch.
    if (Date.now() - startedAt >= BACKOFF.resetAfterMs) service.quickFailures = 0;
    const delay = backoffDelay(service.quickFailures);
    service.quickFailures += 1;
    this.log(`${service.spec.name} exited (${how}); restarting in ${delay} ms`);
    this.update(service, { state: 'restarting', pid: null, startedAt: null });
    service.timer = setTimeout(() => {
      if (this.stopping) return;
      service.status.restarts += 1;
      this.launch(service);
    }, delay);
  }

  private update(service: Service, patch: Partial<ServiceStatus>): void {
    Object.assign(service.status, patch);
    const snapshot = { ...service.status };
    for (const listener of this.listeners) listener(snapshot);
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Group already gone.
  }
}
