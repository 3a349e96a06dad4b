import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Every file location the dev-stack reads or writes, derived from one data dir. */
export interface StackPaths {
  dataDir: string;
  postgresDir: string;
  kafkaDir: string;
  kafkaLibsDir: string;
  kafkaDataDir: string;
  logsDir: string;
  postgresLog: string;
  kafkaLog: string;
  mavenLog: string;
  stateFile: string;
  /** The pom that lists the broker jars (checked in next to this package). */
  kafkaPom: string;
}

/** Directory of this package (packages/dev-stack), independent of the caller's cwd. */
export const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Walks up from `start` to the directory holding pnpm-workspace.yaml, so the default data
 * dir is shared by every package of the monorepo whatever cwd a command runs from.
 */
export function findRepoRoot(start: string = packageDir): string {
  let dir = resolve(start);
  for (;;) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`No pnpm-workspace.yaml found above ${start}`);
    dir = parent;
  }
}

/**
 * Lays out the data dir. `kafkaLibsDir` may point elsewhere so that throw-away data dirs
 * (tests) can share one jar cache instead of resolving ~40 jars from Maven each time.
 */
export function stackPaths(dataDir: string, kafkaLibsDir?: string): StackPaths {
  const root = resolve(dataDir);
  const kafkaDir = join(root, 'kafka');
  const logsDir = join(root, 'logs');
  return {
    dataDir: root,
    postgresDir: join(root, 'postgres'),
    kafkaDir,
    kafkaLibsDir: kafkaLibsDir ? resolve(kafkaLibsDir) : join(kafkaDir, 'libs'),
    kafkaDataDir: join(kafkaDir, 'data'),
    logsDir,
    postgresLog: join(logsDir, 'postgres.log'),
    kafkaLog: join(logsDir, 'kafka.log'),
    mavenLog: join(logsDir, 'kafka-maven.log'),
    stateFile: join(root, 'stack.json'),
    kafkaPom: join(packageDir, 'kafka', 'pom.xml'),
  };
}
