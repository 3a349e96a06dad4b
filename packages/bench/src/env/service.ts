import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** A real service of the repository, run as its tests run it: `node --import tsx src/main.ts`. */
export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts services/<name> with `env` (PORT=0) and learns its port from its ready line
 * (order-api: "listening on …", inventory-consumer: "inventory-consumer ready on …").
 */
export async function startService(
  name: string,
  env: Record<string, string>,
  extraArgs: string[] = [],
  ready: RegExp = /^listening/,
): Promise<ServiceProcess> {
  const cwd = fileURLToPath(new URL(`../../../../services/${name}`, import.meta.url));
  const child = spawn(process.execPath, [...extraArgs, '--import', 'tsx', 'src/main.ts'], {
    cwd,
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not listen:\n${stderr}`)), 60_000);
    void exited.then(() => reject(new Error(`${name} exited before listening:\n${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (ready.test(entry.msg ?? '') && typeof entry.port === 'number') {
          clearTimeout(timer);
          resolve(entry.port);
        }
      } catch {
        // not JSON
      }
    });
  });
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
