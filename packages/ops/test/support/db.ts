import { OutboxWriter, withTransaction, type OutboxEvent } from '@outbox/core';
import type { TestDb } from '@outbox/testkit';

const writer = new OutboxWriter();

/** n events of `aggregateId`, seq 1..n, appended in one transaction; returns their ids. */
export async function appendEvents(db: TestDb, aggregateId: string, n: number): Promise<string[]> {
  const events: OutboxEvent[] = Array.from({ length: n }, (_, i) => ({
    aggregateType: 'order',
    aggregateId,
    eventType: 'OrderEvent',
    payload: { orderId: aggregateId, seq: i + 1 },
  }));
  return (await withTransaction(db.pool, (c) => writer.appendBatch(c, events))).map((a) => a.id);
}

/** Backdates rows: created `ageSeconds` ago and, when `sent`, sent then too. */
export async function age(
  db: TestDb,
  ids: string[],
  ageSeconds: number,
  sent: boolean,
  table = 'outbox',
): Promise<void> {
  await db.pool.query(
    `UPDATE ${table} SET created_at = now() - make_interval(secs => $2::float8),
       sent_at = CASE WHEN $3 THEN now() - make_interval(secs => $2::float8) END,
       topic = CASE WHEN $3 THEN 'orders.events' END
     WHERE id = ANY($1::bigint[])`,
    [ids, ageSeconds, sent],
  );
}

export async function outboxIds(db: TestDb): Promise<string[]> {
  const { rows } = await db.pool.query<{ id: string }>('SELECT id FROM outbox ORDER BY id');
  return rows.map((r) => r.id);
}
