import type { Producer } from 'kafkajs';
import type pg from 'pg';

/** What a publisher under test needs: its schema, the shared producer, the topic. */
export interface PublisherDeps {
  pool: pg.Pool;
  /** Client config with the schema on the search_path (for LISTEN). */
  pgConfig: pg.ClientConfig;
  schema: string;
  producer: Producer;
  topic: string;
}

/** A running publisher: its loop starts on start(), and stop() waits for it to end. */
export interface Publisher {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Loop errors are logged, never fatal (the seed's publishers log and go on). */
export function logError(what: string, error: unknown): void {
  process.stderr.write(`${what}: ${error instanceof Error ? error.message : String(error)}\n`);
}
