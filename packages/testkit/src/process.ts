import { spawn, type ChildProcess } from 'node:child_process';
import { inject } from 'vitest';
import { waitFor } from './wait.ts';

export interface LogLine {
  msg?: string;
  level?: number;
  [key: string]: unknown;
}

export interface ServiceProcess {
  child: ChildProcess;
  /** Parsed JSON log lines so far (stdout), in order. */
  lines: LogLine[];
  /** Raw output (stdout + stderr), for failure messages. */
  output(): string;
  /** http://host:port once ready. */
  url: string;
  /** Resolves with the exit code and signal when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<LogLine>;
  /** SIGTERM, then wait for the exit (SIGKILL after `timeoutMs`). */
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface StartOptions {
  /** The log line that says the service is up; it carries the bound `port`. */
  readyPattern?: RegExp;
  timeoutMs?: number;
  /** The package whose `src/main.ts` runs (default: the package under test). */
  cwd?: string;
}

/**
 * Spawns the service as a real child process (`node --import tsx src/main.ts`) with
 * `env` on top of the parent's, and waits for its ready log line (which carries the
 * HTTP port it bound; PORT=0 lets the OS choose).
 */
export async function startService(
  env: Record<string, string>,
  { readyPattern = /ready on/, timeoutMs = 60_000, cwd = inject('packageDir') }: StartOptions = {},
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  let raw = '';
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    raw += chunk.toString();
    partial += chunk.toString();
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const part of parts) {
      try {
        lines.push(JSON.parse(part) as LogLine);
      } catch {
        lines.push({ msg: part });
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (raw += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    // 'close', not 'exit': 'exit' can come before the last stdout chunk is read, and a
    // test would miss the line a process wrote just before it was killed.
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  let ended = false;
  void exited.then(() => (ended = true));

  const waitForLog = (pattern: RegExp, ms = 30_000) =>
    waitFor(
      () => {
        // The lines first: a process may print the line and die before the next poll
        // (a failure point firing right after "ready"); that still counts as seen.
        const line = lines.find((l) => pattern.test(String(l.msg ?? '')));
        if (line) return line;
        if (ended)
          throw new Error(`service exited while waiting for ${pattern}:\n${raw.slice(-4000)}`);
        return undefined;
      },
      { timeoutMs: ms, intervalMs: 50, what: `log ${pattern}` },
    );

  const ready = await waitForLog(readyPattern, timeoutMs);
  return {
    child,
    lines,
    output: () => raw,
    url: `http://127.0.0.1:${String(ready.port)}`,
    exited,
    waitForLog,
    async stop(ms = 45_000) {
      if (!ended) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), ms);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/** Stops every process still running (afterEach), ignoring those already gone. */
export async function stopAll(processes: ServiceProcess[]): Promise<void> {
  await Promise.all(processes.map((p) => p.stop()));
  processes.length = 0;
}
