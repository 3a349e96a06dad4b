import { withTransaction } from '@outbox/core';
import type { Pool } from 'pg';

/**
 * Empties the demo's data so that a lesson starts from zero: orders, the outbox, the
 * inbox, what the consumer saw and reserved, idempotency keys; stock goes back to
 * available; every failure point is disarmed. Settings (mode, traffic) and the
 * process and relay-membership tables stay. Ids keep counting up (no RESTART
 * IDENTITY): event ids are outbox ids, and messages already in Kafka must never
 * collide with new ones.
 *
 * TRUNCATE waits for the services' open transactions on these tables (a relay's
 * batch in flight); lock_timeout bounds that wait.
 */
export async function resetDemoData(pool: Pool): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await tx.query("SET LOCAL lock_timeout = '15s'");
    await tx.query(
      `TRUNCATE orders, outbox, inbox, reservations, consumer_deliveries, consumer_aggregate_seq,
                consumer_dead_letters, idempotency_keys`,
    );
    await tx.query('UPDATE inventory SET available = available + reserved, reserved = 0');
    await tx.query(
      `UPDATE failure_points SET mode = 'off', remaining = 0, params = '{}'::jsonb, fired = 0,
              updated_at = now()`,
    );
  });
}
