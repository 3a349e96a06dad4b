import type { ClientBase } from 'pg';

export type DeliveryOutcome = 'processed' | 'duplicate' | 'reprocessed';

export interface DeliveryRecord {
  consumer: string;
  eventId: string;
  eventType: string;
  aggregateId: string;
  seq: number | null;
  topic: string;
  partition: number;
  offset: string;
  outcome: DeliveryOutcome;
}

const aggregateKey = (consumer: string, aggregateId: string): string =>
  JSON.stringify([consumer, aggregateId]);

/**
 * FIFO check for the events of a chunk applied for the first time, in order: each must be
 * the next of its aggregate (last_seq + 1; none applied yet means seq 1). A gap or a seq
 * at or behind the last one is a violation. Then last_seq = GREATEST(last_seq, seq).
 * The aggregates' rows are locked (FOR UPDATE, in one order) and written back in one
 * statement each way; the lock serialises two deliveries of one aggregate, should a
 * rebalance hand its partition to another member mid-chunk.
 */
async function checkFifo(
  client: ClientBase,
  records: readonly DeliveryRecord[],
): Promise<boolean[]> {
  const judged = records.filter((r) => r.outcome === 'processed' && r.seq !== null);
  if (judged.length === 0) return records.map(() => false);
  // One row per aggregate; the lock order is the query's ORDER BY.
  const keys = [
    ...new Map(judged.map((r) => [aggregateKey(r.consumer, r.aggregateId), r])).values(),
  ];
  const { rows } = await client.query<{ consumer: string; aggregate_id: string; last_seq: number }>(
    `SELECT s.consumer, s.aggregate_id, s.last_seq
     FROM consumer_aggregate_seq s
     JOIN unnest($1::text[], $2::text[]) AS k (consumer, aggregate_id) USING (consumer, aggregate_id)
     ORDER BY s.consumer, s.aggregate_id
     FOR UPDATE OF s`,
    [keys.map((r) => r.consumer), keys.map((r) => r.aggregateId)],
  );
  const last = new Map(rows.map((r) => [aggregateKey(r.consumer, r.aggregate_id), r.last_seq]));
  const violations = records.map((r) => {
    if (r.outcome !== 'processed' || r.seq === null) return false;
    const key = aggregateKey(r.consumer, r.aggregateId);
    const previous = last.get(key) ?? 0;
    last.set(key, Math.max(previous, r.seq));
    return r.seq !== previous + 1;
  });
  await client.query(
    `INSERT INTO consumer_aggregate_seq (consumer, aggregate_id, last_seq)
     SELECT * FROM unnest($1::text[], $2::text[], $3::int[])
     ON CONFLICT (consumer, aggregate_id)
     DO UPDATE SET last_seq = GREATEST(consumer_aggregate_seq.last_seq, EXCLUDED.last_seq)`,
    [
      keys.map((r) => r.consumer),
      keys.map((r) => r.aggregateId),
      keys.map((r) => last.get(aggregateKey(r.consumer, r.aggregateId))!),
    ],
  );
  return violations;
}

/**
 * Records a chunk's deliveries in consumer_deliveries, in the transaction of their
 * effects, in the order given (ids follow it). Only a 'processed' delivery is judged for
 * FIFO: a duplicate (caught or reprocessed) is a redelivery of something already
 * applied, not a reorder.
 * @returns for each delivery, whether it was flagged as a FIFO violation.
 */
export async function recordDeliveries(
  client: ClientBase,
  records: readonly DeliveryRecord[],
): Promise<boolean[]> {
  if (records.length === 0) return [];
  const fifoViolations = await checkFifo(client, records);
  const column = <T>(pick: (r: DeliveryRecord, i: number) => T): T[] => records.map(pick);
  await client.query(
    `INSERT INTO consumer_deliveries
       (consumer, event_id, event_type, aggregate_id, seq, topic, kafka_partition, kafka_offset, outcome, fifo_violation)
     SELECT consumer, event_id, event_type, aggregate_id, seq, topic, kafka_partition, kafka_offset, outcome, fifo_violation
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::int[], $8::bigint[], $9::text[], $10::boolean[])
       WITH ORDINALITY AS d (consumer, event_id, event_type, aggregate_id, seq, topic, kafka_partition, kafka_offset, outcome, fifo_violation, n)
     ORDER BY n`,
    [
      column((r) => r.consumer),
      column((r) => r.eventId),
      column((r) => r.eventType),
      column((r) => r.aggregateId),
      column((r) => r.seq),
      column((r) => r.topic),
      column((r) => r.partition),
      column((r) => r.offset),
      column((r) => r.outcome),
      column((_, i) => fifoViolations[i]!),
    ],
  );
  return fifoViolations;
}

/**
 * With the inbox off: which of these events were applied before? Applying one of them
 * again is 'reprocessed'.
 */
export async function appliedBefore(
  client: ClientBase,
  consumer: string,
  eventIds: readonly string[],
): Promise<Set<string>> {
  const { rows } = await client.query<{ event_id: string }>(
    `SELECT DISTINCT event_id FROM consumer_deliveries
     WHERE consumer = $1 AND event_id = ANY($2::text[]) AND outcome IN ('processed', 'reprocessed')`,
    [consumer, eventIds],
  );
  return new Set(rows.map((r) => r.event_id));
}
