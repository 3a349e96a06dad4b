import { startStack } from '@outbox/dev-stack';
import type { TestProject } from 'vitest/node';

/** Brings up (or reuses) the real PostgreSQL and Kafka for the whole run. */
export default async function setup(project: TestProject): Promise<void> {
  const stack = await startStack({ log: (line) => process.stderr.write(`[dev-stack] ${line}\n`) });
  project.provide('databaseUrl', stack.databaseUrl);
  project.provide('kafkaBrokers', stack.kafkaBrokers);
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    kafkaBrokers: string[];
  }
}
