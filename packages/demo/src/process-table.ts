import type { Pool } from 'pg';
import type { ServiceStatus } from '@outbox/dev-stack';

/**
 * Mirrors the supervisor's view into `demo_processes`, where the dashboard reads it.
 * Writes are chained so that they land in the order the states changed.
 */
export class ProcessTable {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: Pool,
    private readonly log: (line: string) => void,
  ) {}

  /** Replaces the table's rows with these processes, all down. */
  async reset(processes: { name: string; kind: string; url: string }[]): Promise<void> {
    // One statement, so the sub-DELETE and the INSERT share a snapshot: the INSERT does
    // not see the DELETE's effect and would hit the primary key of a schema that was
    // used before (a second `npm run demo`). So: delete the names no longer wanted,
    // upsert the rest.
    await this.pool.query(
      `WITH gone AS (DELETE FROM demo_processes WHERE name <> ALL($1::text[]))
       INSERT INTO demo_processes (name, kind, state, url)
       SELECT unnest($1::text[]), unnest($2::text[]), 'down', unnest($3::text[])
       ON CONFLICT (name) DO UPDATE SET kind = EXCLUDED.kind, state = 'down', pid = NULL,
         restarts = 0, started_at = NULL, url = EXCLUDED.url, updated_at = now()`,
      [processes.map((p) => p.name), processes.map((p) => p.kind), processes.map((p) => p.url)],
    );
  }

  record(status: ServiceStatus): void {
    this.chain = this.chain.then(async () => {
      try {
        await this.pool.query(
          `UPDATE demo_processes
              SET state = $2, pid = $3, restarts = $4, started_at = to_timestamp($5::float8 / 1000),
                  updated_at = now()
            WHERE name = $1`,
          [status.name, status.state, status.pid, status.restarts, status.startedAt],
        );
      } catch (error) {
        // The dashboard's view goes stale; the processes themselves are unaffected.
        this.log(`demo_processes: ${(error as Error).message}`);
      }
    });
  }

  /** Resolves when every recorded change is written. */
  idle(): Promise<void> {
    return this.chain;
  }
}
