import { setTimeout as sleep } from 'node:timers/promises';

/** True when a process with this pid exists (signal 0 checks without delivering anything). */
export function isPidAlive(pid: number | undefined | null): pid is number {
  if (!pid || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM means it exists but belongs to someone else (e.g. the postgres OS user).
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Options for {@link terminate}. */
export interface TerminateOptions {
  signal?: NodeJS.Signals;
  /** Signal the whole process group (children spawned detached lead their own group). */
  group?: boolean;
  /** After this long the process gets SIGKILL. */
  timeoutMs?: number;
}

/** Sends a signal, waits until the process is gone, escalates to SIGKILL after the timeout. */
export async function terminate(pid: number, opts: TerminateOptions = {}): Promise<void> {
  const target = opts.group ? -pid : pid;
  const send = (signal: NodeJS.Signals): void => {
    try {
      process.kill(target, signal);
    } catch {
      // Already gone (ESRCH): nothing to do.
    }
  };
  if (!isPidAlive(pid)) return;
  send(opts.signal ?? 'SIGTERM');
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  while (isPidAlive(pid)) {
    if (Date.now() >= deadline) {
      send('SIGKILL');
      await sleep(200);
      return;
    }
    await sleep(100);
  }
}
