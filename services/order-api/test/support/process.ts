import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import type { TestDb } from './db.ts';

const serviceDir = fileURLToPath(new URL('../..', import.meta.url));

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  /** Resolves with how the process ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Every stdout line so far (pino JSON). */
  lines: string[];
}

/**
 * Runs the real service (`node --import tsx src/main.ts`) on the test's schema and
 * topic prefix with PORT=0, and learns its port from the "listening" log line.
 */
export async function startService(
  db: TestDb,
  prefix: string,
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: serviceDir,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: db.databaseUrl,
      DATABASE_SCHEMA: db.schema,
      KAFKA_BROKERS: inject('kafkaBrokers').join(','),
      TOPIC_PREFIX: prefix,
      PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const lines: string[] = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not listen:\n${stderr}`)), 60_000);
    void exited.then(({ code, signal }) =>
      reject(new Error(`service exited (${code ?? signal}) before listening:\n${stderr}`)),
    );
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      lines.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg?.startsWith('listening') && typeof entry.port === 'number') {
          clearTimeout(timer);
          resolve(entry.port);
        }
      } catch {
        // not JSON: ignore
      }
    });
  });
  return { child, url: `http://127.0.0.1:${port}`, exited, lines };
}
