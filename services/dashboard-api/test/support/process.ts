import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const serviceDir = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs the real dashboard-api (`node --import tsx src/main.ts`) with `env` and
 * returns how it ended, for a configuration it must refuse (it exits by itself).
 * Killed after `timeoutMs` if it does not.
 */
export async function runToExit(
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: serviceDir,
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  return { code, output };
}
