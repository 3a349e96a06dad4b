import { join } from 'node:path';
import { findRepoRoot, stackPaths, type StackPaths } from './paths.ts';

/** Options shared by startStack, stopStack and stackStatus. */
export interface StackOptions {
  /** Environment to read overrides from; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** Data dir; defaults to $OUTBOX_DATA_DIR or `<repo root>/.data`. */
  dataDir?: string;
  /** Jar cache for the broker; defaults to $OUTBOX_KAFKA_LIBS_DIR or `<dataDir>/kafka/libs`. */
  kafkaLibsDir?: string;
  /** Progress lines; defaults to stderr. */
  log?: (line: string) => void;
}

/** Options with defaults applied: the only place that looks at process.env. */
export interface StackContext {
  env: NodeJS.ProcessEnv;
  paths: StackPaths;
  log: (line: string) => void;
  /** External PostgreSQL (DATABASE_URL) instead of the embedded one. */
  externalDatabaseUrl: string | undefined;
  /** External brokers (KAFKA_BROKERS) instead of the local one. */
  externalBrokers: string[] | undefined;
}

const defaultLog = (line: string): void => {
  process.stderr.write(`[dev-stack] ${line}\n`);
};

/** Applies defaults and reads the environment overrides once. */
export function resolveContext(opts: StackOptions = {}): StackContext {
  const env = opts.env ?? process.env;
  const dataDir = opts.dataDir ?? nonEmpty(env.OUTBOX_DATA_DIR) ?? join(findRepoRoot(), '.data');
  const libs = opts.kafkaLibsDir ?? nonEmpty(env.OUTBOX_KAFKA_LIBS_DIR);
  const brokers = nonEmpty(env.KAFKA_BROKERS)
    ?.split(',')
    .map((b) => b.trim())
    .filter((b) => b.length > 0);
  return {
    env,
    paths: stackPaths(dataDir, libs),
    log: opts.log ?? defaultLog,
    externalDatabaseUrl: nonEmpty(env.DATABASE_URL),
    externalBrokers: brokers && brokers.length > 0 ? brokers : undefined,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value && value.trim() !== '' ? value.trim() : undefined;
}
