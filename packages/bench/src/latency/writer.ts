import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { orderPayload } from '../env/payload.ts';
import type { TableKind } from '../env/tables.ts';
import { serveWorker, workerSpec, type WorkerMessage } from '../env/worker.ts';
import { nowMs } from './clock.ts';

/**
 * The business writer of the latency scenario, in a process of its own: an open-loop
 * load at a fixed rate (events are due at i / rate whatever the previous ones do), each
 * one an order INSERT and its outbox event in one transaction. It records, per event
 * id, when its COMMIT returned.
 */
export interface WriterSpec {
  databaseUrl: string;
}

export interface WriteRun {
  schema: string;
  table: TableKind;
  rate: number;
  seconds: number;
}

export interface WriteResult {
  ids: string[];
  committedAt: number[];
  /** Date.now() at the same moment: only to split the latency with Kafka's timestamps. */
  committedWall: number[];
  offered: number;
  failed: number;
  seconds: number;
}

const spec = workerSpec<WriterSpec>();
const pools = new Map<string, pg.Pool>();

function poolFor(schema: string): pg.Pool {
  let pool = pools.get(schema);
  if (!pool) {
    pool = new pg.Pool({
      connectionString: spec.databaseUrl,
      options: `-c search_path=${schema}`,
      max: 16,
    });
    pool.on('error', () => undefined);
    pools.set(schema, pool);
  }
  return pool;
}

// One statement per event: the order and its outbox row in a single implicit
// transaction (a statement commits atomically), one round trip. Four round trips per
// event (BEGIN, INSERT, INSERT, COMMIT) could not offer 3,000 events/s from one
// process on this 2-core machine; the real write path (order-api, OutboxWriter) is
// what scenario 5 measures. The rows are those each variant's own writer inserts.
const INSERTS: Record<TableKind, string> = {
  ours: `WITH o AS (INSERT INTO bench_orders (id, user_id, sku, quantity) VALUES ($1, $2, $3, $4))
         INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers)
         VALUES ('order', $1, 'OrderCreated', $5, $6) RETURNING id::text`,
  seed: `WITH o AS (INSERT INTO bench_orders (id, user_id, sku, quantity) VALUES ($1, $2, $3, $4))
         INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers)
         VALUES ('order', $1, 'OrderCreated', $5, $6) RETURNING id::text`,
  // The peer's row as its initializeMessageStorage writes it; segment = the aggregate.
  peer: `WITH o AS (INSERT INTO bench_orders (id, user_id, sku, quantity) VALUES ($1, $2, $3, $4))
         INSERT INTO outbox (id, aggregate_type, aggregate_id, message_type, segment, payload, metadata)
         VALUES (gen_random_uuid(), 'order', $1, 'OrderCreated', $1, $5, $6) RETURNING id::text`,
};

async function writeOne(run: WriteRun, i: number): Promise<string> {
  const orderId = randomUUID();
  const payload = orderPayload(i, orderId);
  const { rows } = await poolFor(run.schema).query<{ id: string }>(INSERTS[run.table], [
    orderId,
    payload.userId,
    payload.sku,
    payload.quantity,
    JSON.stringify(payload),
    JSON.stringify({ correlationId: randomUUID() }),
  ]);
  return rows[0]!.id;
}

async function run(message: WorkerMessage): Promise<WriteResult> {
  const r = message.run as WriteRun;
  const total = Math.round(r.rate * r.seconds);
  const ids: string[] = [];
  const committedAt: number[] = [];
  const committedWall: number[] = [];
  let failed = 0;
  const inFlight = new Set<Promise<void>>();
  const start = nowMs();
  let issued = 0;
  while (issued < total) {
    const due = Math.min(total, Math.floor(((nowMs() - start) / 1000) * r.rate) + 1);
    for (; issued < due; issued += 1) {
      const p = writeOne(r, issued).then(
        (id) => {
          committedAt.push(nowMs());
          committedWall.push(Date.now());
          ids.push(id);
        },
        () => {
          failed += 1;
        },
      );
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
    // ~1 ms granularity: setTimeout(0) in Node waits at least 1 ms.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  await Promise.all(inFlight);
  const seconds = (nowMs() - start) / 1000;
  return { ids, committedAt, committedWall, offered: total, failed, seconds };
}

serveWorker({ run }, async () => {
  for (const pool of pools.values()) await pool.end();
});
