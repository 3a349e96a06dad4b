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

/**
 * FIFO check for an event applied for the first time: it must be the next of its
 * aggregate (last_seq + 1; none applied yet means seq 1). A gap or a seq at or behind
 * the last one is a violation. Then last_seq = GREATEST(last_seq, seq). The row lock
 * (upsert) serialises two deliveries of one aggregate.
 */
async function checkFifo(client: ClientBase, r: DeliveryRecord): Promise<boolean> {
  if (r.seq === null) return false;
  const { rows } = await client.query<{ last_seq: number }>(
    'SELECT last_seq FROM consumer_aggregate_seq WHERE consumer = $1 AND aggregate_id = $2 FOR UPDATE',
    [r.consumer, r.aggregateId],
  );
  const last = rows[0]?.last_seq ?? 0;
  await client.query(
    `INSERT INTO consumer_aggregate_seq (consumer, aggregate_id, last_seq) VALUES ($1, $2, $3)
     ON CONFLICT (consumer, aggregate_id)
     DO UPDATE SET last_seq = GREATEST(consumer_aggregate_seq.last_seq, EXCLUDED.last_seq)`,
    [r.consumer, r.aggregateId, r.seq],
  );
  return r.seq !== last + 1;
}

/**
 * Records one delivery in consumer_deliveries, in the transaction of its effect.
 * Only a 'processed' delivery is judged for FIFO: a duplicate (caught or reprocessed)
 * is a redelivery of something already applied, not a reorder.
 * @returns whether it was flagged as a FIFO violation.
 */
export async function recordDelivery(client: ClientBase, r: DeliveryRecord): Promise<boolean> {
  const fifoViolation = r.outcome === 'processed' ? await checkFifo(client, r) : false;
  await client.query(
    `INSERT INTO consumer_deliveries
       (consumer, event_id, event_type, aggregate_id, seq, topic, kafka_partition, kafka_offset, outcome, fifo_violation)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      r.consumer,
      r.eventId,
      r.eventType,
      r.aggregateId,
      r.seq,
      r.topic,
      r.partition,
      r.offset,
      r.outcome,
      fifoViolation,
    ],
  );
  return fifoViolation;
}

/** With the inbox off: was this event applied before? Then applying it again is 'reprocessed'. */
export async function appliedBefore(
  client: ClientBase,
  consumer: string,
  eventId: string,
): Promise<boolean> {
  const { rowCount } = await client.query(
    `SELECT 1 FROM consumer_deliveries
     WHERE consumer = $1 AND event_id = $2 AND outcome IN ('processed', 'reprocessed') LIMIT 1`,
    [consumer, eventId],
  );
  return (rowCount ?? 0) > 0;
}
