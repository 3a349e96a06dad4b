import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runLogged } from './kafka-jars.ts';
import type { StackContext } from './options.ts';
import { packageDir } from './paths.ts';

/** Where Kafka Connect's jars, its plugins and its files live under the data dir. */
export interface ConnectPaths {
  dir: string;
  /** The worker's classpath (connect-runtime and what it needs). */
  libsDir: string;
  /** `plugin.path`: one folder per plugin (Debezium, our header transform). */
  pluginsDir: string;
  log: string;
  mavenLog: string;
}

export function connectPaths(ctx: StackContext): ConnectPaths {
  const dir = join(ctx.paths.dataDir, 'connect');
  const cache = ctx.env.OUTBOX_CONNECT_JARS_DIR?.trim() || join(dir, 'jars');
  return {
    dir,
    libsDir: join(cache, 'libs'),
    pluginsDir: join(cache, 'plugins'),
    log: join(ctx.paths.logsDir, 'connect.log'),
    mavenLog: join(ctx.paths.logsDir, 'connect-maven.log'),
  };
}

const poms = {
  worker: join(packageDir, 'connect', 'pom.xml'),
  debezium: join(packageDir, 'connect', 'plugins', 'debezium', 'pom.xml'),
  headers: join(packageDir, 'connect', 'plugins', 'outbox-headers', 'pom.xml'),
};
const MARKER = '.connect-jars';

/**
 * Resolves Connect, the Debezium connector and builds our header transform with Maven,
 * once per content of the three poms and the transform's source (the marker records
 * it). Everything lands in a temporary dir renamed into place, so an interrupted run
 * never leaves a cache the marker vouches for. ~90 s on first run here.
 */
export async function ensureConnectJars(ctx: StackContext): Promise<ConnectPaths> {
  const paths = connectPaths(ctx);
  const cache = join(paths.libsDir, '..');
  const fingerprint = await sourcesFingerprint();
  const marker = join(cache, MARKER);
  if (existsSync(marker) && (await readFile(marker, 'utf8')) === fingerprint) return paths;

  ctx.log(
    `connect: resolving Kafka Connect and Debezium with Maven (first run only, log ${paths.mavenLog})`,
  );
  const started = Date.now();
  const tmp = `${cache}.tmp-${process.pid}`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(join(tmp, 'plugins', 'outbox-headers'), { recursive: true });
  await mkdir(ctx.paths.logsDir, { recursive: true });
  const copy = (pom: string, out: string, extra: string[] = []) =>
    maven(ctx, paths, [
      '-f',
      pom,
      'dependency:copy-dependencies',
      '-DincludeScope=runtime',
      `-DoutputDirectory=${out}`,
      ...extra,
    ]);
  await copy(poms.worker, join(tmp, 'libs'));
  // Kafka's and SLF4J's jars come from the worker; a second copy in the plugin only
  // invites class-loading conflicts.
  await copy(poms.debezium, join(tmp, 'plugins', 'debezium'), [
    '-DexcludeGroupIds=org.apache.kafka,org.slf4j',
  ]);
  const build = join(tmp, 'build');
  await cp(join(poms.headers, '..'), build, {
    recursive: true,
    filter: (src) => !src.includes(`${'/'}target`),
  });
  await maven(ctx, paths, ['-f', join(build, 'pom.xml'), 'package', '-DskipTests']);
  const jar = (await readdir(join(build, 'target'))).find((f) => f.endsWith('.jar'));
  if (!jar) throw new Error(`the header transform built no jar; see ${paths.mavenLog}`);
  await cp(join(build, 'target', jar), join(tmp, 'plugins', 'outbox-headers', jar));
  await rm(build, { recursive: true, force: true });
  await writeFile(join(tmp, MARKER), fingerprint);
  await rm(cache, { recursive: true, force: true });
  await mkdir(join(cache, '..'), { recursive: true });
  await rename(tmp, cache);
  ctx.log(`connect: jars ready in ${cache} (${Math.round((Date.now() - started) / 1000)} s)`);
  return paths;
}

async function maven(ctx: StackContext, paths: ConnectPaths, args: string[]): Promise<void> {
  const code = await runLogged('mvn', ['-q', '-B', ...args], paths.mavenLog, ctx.env);
  if (code !== 0)
    throw new Error(`mvn failed (exit ${code}) for Kafka Connect; see ${paths.mavenLog}`);
}

/** The poms and the transform's Java source: a change to any of them rebuilds the cache. */
async function sourcesFingerprint(): Promise<string> {
  const java = join(
    packageDir,
    'connect',
    'plugins',
    'outbox-headers',
    'src',
    'main',
    'java',
    'lab',
    'outbox',
    'connect',
  );
  const files = [
    poms.worker,
    poms.debezium,
    poms.headers,
    ...(await readdir(java)).map((f) => join(java, f)),
  ];
  const { createHash } = await import('node:crypto');
  const hash = createHash('sha256');
  for (const file of files.sort()) hash.update(await readFile(file));
  return `${hash.digest('hex')}\n`;
}
