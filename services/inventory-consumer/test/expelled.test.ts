import { describe, expect, it } from 'vitest';
import { startService, testKafka, waitFor } from '@outbox/testkit';
import { consumerEnv, deliveries, orderCreated, produce } from './support/events.ts';
import { reportOnFailure } from './support/diagnostics.ts';
import { useConsumerFixture } from './support/fixture.ts';

/**
 * The core of the stall, made deterministic: a delivery that takes longer than
 * the group's session timeout (10 s) gets the member expelled; when it then commits its
 * offset, the coordinator answers "not aware of this member". On 33fff18 kafkajs turned
 * that into a non-retriable crash it does not restart, and the process went on saying
 * healthy. Here the delivery is held by a row lock instead of a database outage.
 */
describe('inventory-consumer: expelled from its group during a delivery', () => {
  const kafka = testKafka();
  const fx = useConsumerFixture(kafka);

  it('rejoins and goes on consuming; /healthz is not ok while it cannot', async () => {
    const consumer = await startService(
      consumerEnv(fx.db, fx.prefix, { NODE_ENV: 'production', CONSUMER_STALL_MS: '5000' }),
    );
    fx.procs.push(consumer);
    reportOnFailure(consumer);
    const admin = kafka.admin();
    await admin.connect();
    const blocker = await fx.db.pool.connect();
    let locked = false;
    try {
      await blocker.query('BEGIN');
      locked = true;
      await blocker.query("SELECT * FROM inventory WHERE sku = 'sku-1' FOR UPDATE");
      await produce(fx.producer, fx.topic, [orderCreated({ sku: 'sku-1' })]);
      await waitFor(
        async () =>
          (
            await fx.db.pool.query(
              `SELECT 1 FROM pg_stat_activity
               WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE inventory SET reserved%'`,
            )
          ).rowCount === 1,
        { what: 'the consumer blocked on the row lock' },
      );
      // No heartbeat while eachMessage waits: the coordinator expels the member.
      const groupId = `${fx.prefix}inventory`;
      await waitFor(
        async () => (await admin.describeGroups([groupId])).groups[0]?.members.length === 0,
        { what: 'the member expelled from the group', timeoutMs: 60_000, intervalMs: 500 },
      );
      const stalled = await fetch(`${consumer.url}/healthz`);
      // Soft: the outcome below is reported as well when this already fails.
      expect.soft({ status: stalled.status, body: await stalled.json() }).toMatchObject({
        status: 503,
      });
      await blocker.query('ROLLBACK');
      locked = false;

      await produce(fx.producer, fx.topic, [orderCreated({ sku: 'sku-2' })]);
      const processed = async () =>
        (await deliveries(fx.db)).filter((d) => d.outcome === 'processed').map((d) => d.event_id);
      await waitFor(async () => (await processed()).length >= 2, {
        what: 'both events applied (the held one, and one produced after)',
        timeoutMs: 90_000,
      }).catch(() => undefined);
      // Each applied once; the held one may come back as a duplicate, caught by the inbox.
      const applied = await processed();
      expect({ applied: applied.length, distinct: new Set(applied).size }).toEqual({
        applied: 2,
        distinct: 2,
      });
      await waitFor(async () => (await fetch(`${consumer.url}/healthz`)).status === 200, {
        what: '/healthz ok once consuming again',
        timeoutMs: 30_000,
      });
      expect(consumer.child.exitCode).toBeNull();
    } finally {
      if (locked) await blocker.query('ROLLBACK');
      blocker.release();
      await admin.disconnect();
    }
  }, 240_000);
});
