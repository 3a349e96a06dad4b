import { describe, expect, it } from 'vitest';
import { startService, stopAll, testKafka, waitFor } from '@outbox/testkit';
import { consumerEnv, deliveries, orderCreated, produce, reservations } from './support/events.ts';
import { useConsumerFixture } from './support/fixture.ts';

describe('inventory-consumer: a transient database error', () => {
  const kafka = testKafka();
  const fx = useConsumerFixture(kafka);

  it('is retried through Kafka, not dead-lettered: the event is applied once', async () => {
    const consumer = await startService(consumerEnv(fx.db, fx.prefix));
    fx.procs.push(consumer);
    // Hold the stock row so the consumer's UPDATE waits, then kill its connection
    // for real (57P01 admin shutdown), as a PostgreSQL restart would.
    const blocker = await fx.db.pool.connect();
    await blocker.query('BEGIN');
    await blocker.query("SELECT * FROM inventory WHERE sku = 'sku-1' FOR UPDATE");
    const event = orderCreated({ quantity: 1 });
    await produce(fx.producer, fx.topic, [event]);
    const victim = await waitFor(
      async () => {
        const { rows } = await fx.db.pool.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity
           WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE inventory SET reserved%'`,
        );
        return rows[0]?.pid;
      },
      { what: 'the consumer blocked on the row lock' },
    );
    await fx.db.pool.query('SELECT pg_terminate_backend($1)', [victim]);
    await blocker.query('ROLLBACK');
    blocker.release();

    await waitFor(async () => (await deliveries(fx.db)).length === 1, {
      what: 'the retried delivery',
      timeoutMs: 30_000,
    });
    const { orderId } = JSON.parse(String(event.value)) as { orderId: string };
    expect(await reservations(fx.db, orderId)).toHaveLength(1);
    expect((await deliveries(fx.db))[0]?.outcome).toBe('processed');
    const { rows } = await fx.db.pool.query('SELECT * FROM consumer_dead_letters');
    expect(rows).toEqual([]);
    expect(consumer.child.exitCode).toBeNull(); // survived the lost connection
    const metrics = await (await fetch(`${consumer.url}/metrics`)).text();
    expect(metrics).toMatch(/consumer_transient_errors_total 1/);
  });

  it('a statement timeout on a locked row (57014) is retried, not dead-lettered: applied once the lock goes', async () => {
    // The consumer's sessions get a 50 ms statement_timeout (set at connect, from its
    // configuration), so every one of its statements that waits for the row lock below
    // is cancelled with SQLSTATE 57014.
    const blocker = await fx.db.pool.connect();
    let locked = false;
    try {
      const consumer = await startService({
        ...consumerEnv(fx.db, fx.prefix),
        DATABASE_STATEMENT_TIMEOUT_MS: '50',
      });
      fx.procs.push(consumer);
      await blocker.query('BEGIN');
      locked = true;
      await blocker.query("SELECT * FROM inventory WHERE sku = 'sku-1' FOR UPDATE");
      const event = orderCreated({ quantity: 1 });
      await produce(fx.producer, fx.topic, [event]);
      const transientErrors = async () => {
        const metrics = await (await fetch(`${consumer.url}/metrics`)).text();
        return Number(/^consumer_transient_errors_total (\d+)/m.exec(metrics)?.[1] ?? 0);
      };
      const deadLetters = async () =>
        (await fx.db.pool.query<{ reason: string }>('SELECT reason FROM consumer_dead_letters'))
          .rows;
      // Either outcome ends the wait: two timeouts retried, or the message parked.
      await waitFor(
        async () => (await transientErrors()) >= 2 || (await deadLetters()).length > 0,
        {
          what: 'the consumer to meet the statement timeout twice',
          timeoutMs: 60_000,
        },
      );
      expect(await deadLetters()).toEqual([]);
      expect(await deliveries(fx.db)).toEqual([]);
      await blocker.query('ROLLBACK');
      locked = false;

      await waitFor(async () => (await deliveries(fx.db)).length === 1, {
        what: 'the delivery once the lock is released',
        timeoutMs: 60_000,
      });
      const { orderId } = JSON.parse(String(event.value)) as { orderId: string };
      expect(await reservations(fx.db, orderId)).toHaveLength(1);
      expect((await deliveries(fx.db))[0]?.outcome).toBe('processed');
      expect(await deadLetters()).toEqual([]);
      expect(
        consumer.lines.some((l) => l.err && /statement timeout/.test(JSON.stringify(l.err))),
      ).toBe(true);
    } finally {
      if (locked) await blocker.query('ROLLBACK');
      blocker.release();
      await stopAll(fx.procs);
    }
  });
});
