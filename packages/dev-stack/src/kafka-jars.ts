import { spawn } from 'node:child_process';
import { existsSync, openSync, closeSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StackContext } from './options.ts';

const MARKER = '.kafka-version';

/** Kafka version pinned in the pom: the single source of truth for which jars to fetch. */
export async function pomKafkaVersion(pom: string): Promise<string> {
  const match = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(await readFile(pom, 'utf8'));
  if (!match?.[1]) throw new Error(`No <kafka.version> property in ${pom}`);
  return match[1].trim();
}

/**
 * Copies the broker's runtime jars from Maven into the libs dir once per Kafka version. Jars
 * land in a temporary dir that is renamed into place, so an interrupted download never leaves
 * a half-filled cache that the marker would vouch for.
 */
export async function ensureKafkaJars(ctx: StackContext): Promise<string> {
  const { paths } = ctx;
  const version = await pomKafkaVersion(paths.kafkaPom);
  const marker = join(paths.kafkaLibsDir, MARKER);
  if (existsSync(marker) && (await readFile(marker, 'utf8')).trim() === version) return version;

  ctx.log(
    `kafka: resolving Kafka ${version} jars with Maven (first run only, log ${paths.mavenLog})`,
  );
  const started = Date.now();
  const tmp = `${paths.kafkaLibsDir}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  await mkdir(paths.logsDir, { recursive: true });
  const args = [
    '-q',
    '-B',
    '-f',
    paths.kafkaPom,
    'dependency:copy-dependencies',
    '-DincludeScope=runtime',
    `-DoutputDirectory=${tmp}`,
  ];
  const code = await runLogged('mvn', args, paths.mavenLog, ctx.env);
  if (code !== 0) {
    await rm(tmp, { recursive: true, force: true });
    throw new Error(`mvn failed (exit ${code}) resolving Kafka jars; see ${paths.mavenLog}`);
  }
  await writeFile(join(tmp, MARKER), `${version}\n`);
  await rm(paths.kafkaLibsDir, { recursive: true, force: true });
  await rename(tmp, paths.kafkaLibsDir);
  ctx.log(
    `kafka: jars ready in ${paths.kafkaLibsDir} (${Math.round((Date.now() - started) / 1000)} s)`,
  );
  return version;
}

/** Runs a command with stdout/stderr appended to a log file; resolves its exit code. */
export function runLogged(
  command: string,
  args: string[],
  logFile: string,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const fd = openSync(logFile, 'a');
  return new Promise<number>((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', fd, fd] });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code ?? 1));
  }).finally(() => closeSync(fd));
}
