import { type Message, Partitioners, type Producer } from 'kafkajs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ServiceProcess,
  startService,
  type TestDb,
  testKafka,
  waitFor,
} from '@outbox/testkit';
import { consumerEnv, orderCreated } from './support/events.ts';
import { closeFixture, openFixture } from './support/fixture.ts';

/**
 * Found by the 30-minute soak at 100 orders/s: the consumer applied one message at a
 * time across all six partitions (~156 events/s on this machine, less than the ~170/s
 * that 100 orders/s publish), so its lag only grew and the drain never finished. A
 * message that waits (here on a row lock, in the soak on round trips) must hold up its
 * own partition only: FIFO is per partition, nothing orders two partitions.
 */
describe('inventory-consumer: partitions are consumed side by side', () => {
  const kafka = testKafka();
  let db: TestDb;
  let prefix: string;
  let topic: string;
  let producer: Producer;
  const procs: ServiceProcess[] = [];

  beforeEach(async () => {
    ({ db, prefix, topic, producer } = await openFixture(kafka));
  });
  afterEach(() => closeFixture(procs, { db, producer }));

  it('a message blocked on one partition does not stop the others', async () => {
    const blocker = await db.pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query("SELECT * FROM inventory WHERE sku = 'sku-1' FOR UPDATE");
      // A sku-1 order on partition 0, which waits for the lock; sku-2 orders on every
      // other partition. All are on the topic before the consumer starts, so its first
      // fetch holds every partition, partition 0 first: one at a time, the others wait.
      let blocked = orderCreated({ sku: 'sku-1', quantity: 1 });
      while (partitionOf(blocked) !== 0) blocked = orderCreated({ sku: 'sku-1', quantity: 1 });
      const others = Array.from({ length: 30 }, () =>
        orderCreated({ sku: 'sku-2', quantity: 1 }),
      ).filter((m) => partitionOf(m) !== 0);
      expect(new Set(others.map(partitionOf)).size).toBeGreaterThan(1);
      await producer.send({ topic, acks: -1, messages: [blocked] });
      await producer.send({ topic, acks: -1, messages: others });
      const consumer = await startService(
        // A long lock wait: the blocked statement must still be waiting when the others
        // are checked (the server would end it at the lock timeout and the rest would go on).
        consumerEnv(db, prefix, {
          DATABASE_LOCK_TIMEOUT_MS: '25000',
          DATABASE_STATEMENT_TIMEOUT_MS: '30000',
          DATABASE_QUERY_TIMEOUT_MS: '40000',
        }),
      );
      procs.push(consumer);
      const orderIds = others.map(
        (m) => (JSON.parse(String(m.value)) as { orderId: string }).orderId,
      );
      await waitFor(
        async () => {
          const { rows } = await db.pool.query<{ n: number }>(
            'SELECT count(DISTINCT order_id)::int AS n FROM reservations WHERE order_id = ANY($1::uuid[])',
            [orderIds],
          );
          return rows[0]!.n === orderIds.length;
        },
        {
          what: 'the orders on the other partitions applied while partition 0 waits',
          timeoutMs: 20_000,
        },
      );
      // The sku-1 message is still waiting, in its own partition.
      expect(await lockWaiters()).toBe(1);
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
  });

  async function lockWaiters(): Promise<number> {
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE inventory SET reserved%'`,
    );
    return rows[0]!.n;
  }
});

/** The partition of six the test producer (kafkajs' default, murmur2) puts `message` on. */
const partitioner = Partitioners.DefaultPartitioner();
function partitionOf(message: Message): number {
  const partitionMetadata = [0, 1, 2, 3, 4, 5].map((partitionId) => ({
    partitionId,
    leader: 0,
    partitionErrorCode: 0,
    replicas: [0],
    isr: [0],
  }));
  return partitioner({ topic: 'orders', partitionMetadata, message });
}
