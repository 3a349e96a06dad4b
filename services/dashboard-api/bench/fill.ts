import type { Pool } from 'pg';

/**
 * Fills a schema the way a long demo run would leave it, in bulk: `rows` orders, each
 * with its OrderCreated in the outbox (sent), delivered once, in the inbox, reserved;
 * then `pending` recent orders whose events are still pending. Timestamps spread over
 * the past (100 ms apart), so the orders window of the tick holds only new orders.
 */
export async function fill(
  pool: Pool,
  { rows, pending }: { rows: number; pending: number },
  progress: (line: string) => void,
): Promise<void> {
  const step = async (what: string, sql: string, values: unknown[] = []) => {
    const started = performance.now();
    await pool.query(sql, values);
    progress(`${what} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  };
  await step(
    `${rows} orders`,
    `INSERT INTO orders (id, user_id, sku, quantity, status, seq, mode, created_at, updated_at)
     SELECT gen_random_uuid(), 1 + g % 1000, 'sku-' || (1 + g % 5), 1, 'created', 1, 'outbox',
            now() - interval '1 hour' - ($1::int - g) * interval '100 ms',
            now() - interval '1 hour' - ($1::int - g) * interval '100 ms'
       FROM generate_series(1, $1::int) g`,
    [rows],
  );
  await step(
    `${rows} outbox rows, sent`,
    `INSERT INTO outbox (aggregate_type, aggregate_id, event_type, event_version, payload, created_at,
                         sent_at, topic)
     SELECT 'order', o.id::text, 'OrderCreated', 2,
            jsonb_build_object('orderId', o.id, 'userId', o.user_id, 'sku', o.sku, 'quantity', 1,
                               'seq', 1, 'source', 'traffic'),
            o.created_at, o.created_at + interval '20 ms', 'orders.events'
       FROM orders o ORDER BY o.created_at`,
  );
  await step(
    `${rows} deliveries`,
    `INSERT INTO consumer_deliveries (consumer, event_id, event_type, aggregate_id, seq, topic,
                                      kafka_partition, kafka_offset, outcome, received_at)
     SELECT 'inventory', x.id::text, 'OrderCreated', x.aggregate_id, 1, x.topic, (x.id % 6)::int,
            x.id / 6, 'processed', x.sent_at + interval '20 ms'
       FROM outbox x ORDER BY x.id`,
  );
  await step(
    `${rows} inbox rows`,
    `INSERT INTO inbox (consumer, event_id, topic, kafka_partition, kafka_offset, processed_at)
     SELECT consumer, event_id, topic, kafka_partition, kafka_offset, received_at FROM consumer_deliveries`,
  );
  await step(
    `${rows} reservations`,
    `INSERT INTO reservations (order_id, sku, quantity, event_id, created_at)
     SELECT d.aggregate_id::uuid, 'sku-1', 1, d.event_id, d.received_at FROM consumer_deliveries d ORDER BY d.id`,
  );
  await step(
    `${pending} pending orders + outbox rows`,
    `WITH o AS (
       INSERT INTO orders (id, user_id, sku, quantity, status, seq, mode, created_at, updated_at)
       SELECT gen_random_uuid(), 1, 'sku-1', 1, 'created', 1, 'outbox', now() - interval '30 s', now()
         FROM generate_series(1, $1::int)
       RETURNING id, created_at)
     INSERT INTO outbox (aggregate_type, aggregate_id, event_type, event_version, payload, created_at)
     SELECT 'order', o.id::text, 'OrderCreated', 2, jsonb_build_object('orderId', o.id), o.created_at FROM o`,
    [pending],
  );
  // A bulk load leaves no statistics and an unset visibility map; a long-running
  // system has both (autovacuum): measure that steady state.
  await step(
    'VACUUM ANALYZE',
    'VACUUM (ANALYZE) orders, outbox, consumer_deliveries, inbox, reservations',
  );
}
