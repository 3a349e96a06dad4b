import { startService as start, type ServiceProcess } from '@outbox/testkit';
import { inject } from 'vitest';
import type { TestDb } from './db.ts';

export type { ServiceProcess };

/**
 * Runs the real service (`node --import tsx src/main.ts`) on the test's schema and
 * topic prefix with PORT=0; its "listening" log line carries the port.
 */
export function startService(
  db: TestDb,
  prefix: string,
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  return start(
    {
      DATABASE_URL: db.databaseUrl,
      DATABASE_SCHEMA: db.schema,
      KAFKA_BROKERS: inject('kafkaBrokers').join(','),
      TOPIC_PREFIX: prefix,
      CHAOS_ENABLED: 'true',
      ...env,
    },
    { readyPattern: /^listening/ },
  );
}
