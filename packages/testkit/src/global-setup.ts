import { startStack } from '@outbox/dev-stack';
import type { TestProject } from 'vitest/node';

/**
 * Brings up (or reuses: DATABASE_URL / KAFKA_BROKERS) the real PostgreSQL and Kafka for
 * the whole run, and tells the tests where they are and which package they belong to
 * (service runners start `src/main.ts` of that package).
 */
export default async function setup(project: TestProject): Promise<void> {
  const stack = await startStack({ log: (line) => process.stderr.write(`[dev-stack] ${line}\n`) });
  project.provide('databaseUrl', stack.databaseUrl);
  project.provide('kafkaBrokers', stack.kafkaBrokers);
  project.provide('packageDir', project.config.root);
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    kafkaBrokers: string[];
    /** Root of the package under test (its vitest.config.ts folder). */
    packageDir: string;
  }
}
