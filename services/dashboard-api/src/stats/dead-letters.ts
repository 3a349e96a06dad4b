import type { Pool } from 'pg';
import type { FeedEvent } from '../contract.ts';
import { IdTail } from './id-tail.ts';
import { tailRows } from './sql.ts';

interface DeadLetterRow {
  id: string;
  consumer: string;
  topic: string;
  kafka_partition: number;
  kafka_offset: string;
  reason: string;
  created_at: Date;
}

/** Tails consumer_dead_letters: what inventory-consumer could not handle and sent to its DLQ. */
export class DeadLettersTail {
  private readonly tail = new IdTail();
  count = 0;

  constructor(private readonly pool: Pool) {}

  async baseline(): Promise<void> {
    const { rows } = await this.pool.query<{ max_id: string; count: number }>(
      'SELECT COALESCE(max(id), 0)::text AS max_id, count(*)::int AS count FROM consumer_dead_letters',
    );
    this.count = rows[0]?.count ?? 0;
    this.tail.reset(rows[0]?.max_id ?? '0');
  }

  async next(): Promise<Extract<FeedEvent, { kind: 'dead_letter' }>[]> {
    const { rows } = await this.pool.query<DeadLetterRow>(
      `SELECT n.id::text AS id, n.consumer, n.topic, n.kafka_partition,
              n.kafka_offset::text AS kafka_offset, left(n.reason, 500) AS reason, n.created_at
         FROM (${tailRows('consumer_dead_letters', '*', '$3')}) n ORDER BY n.id`,
      [this.tail.watermark, this.tail.gapIds, 1_000],
    );
    this.tail.advance(rows.map((r) => r.id));
    this.count += rows.length;
    return rows.map((r) => ({
      kind: 'dead_letter',
      id: r.id,
      at: r.created_at.toISOString(),
      consumer: r.consumer,
      topic: r.topic,
      partition: r.kafka_partition,
      offset: r.kafka_offset,
      reason: r.reason,
    }));
  }
}
