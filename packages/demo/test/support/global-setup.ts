import { startStack } from '@outbox/dev-stack';

/** Brings up (or reuses) the real PostgreSQL and Kafka once, before the systems start. */
export default async function setup(): Promise<void> {
  await startStack({ log: (line) => process.stderr.write(`[dev-stack] ${line}\n`) });
}
