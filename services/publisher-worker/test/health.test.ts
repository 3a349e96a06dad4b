import { describe, expect, it } from 'vitest';
import { startService, testKafka, waitFor } from '@outbox/testkit';
import { append, orderEvents, pending, workerEnv, useWorkerFixture } from './support/outbox.ts';

/**
 * /healthz tells the truth about the relay loop (issue 10): a loop that has not
 * completed a tick for longer than RELAY_STALL_MS answers 503, whatever the reason.
 * Here the tick is held by a lock on the outbox table that its claim must wait for.
 */
describe('publisher-worker /healthz', () => {
  const kafka = testKafka();
  const fx = useWorkerFixture(kafka);

  it('is not ok while the relay loop completes no tick, and ok again once it does', async () => {
    const worker = await startService(
      workerEnv(fx.db, fx.prefix, {
        REPLICA_ID: 'w1',
        POLL_INTERVAL_MS: '500',
        RELAY_STALL_MS: '3000',
      }),
    );
    fx.procs.push(worker);
    const health = async () => {
      const res = await fetch(`${worker.url}/healthz`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    await waitFor(async () => (await health()).status === 200, { what: 'a healthy relay' });
    expect
      .soft((await health()).body)
      .toMatchObject({ ok: true, lastTickAgoMs: expect.any(Number) });

    const blocker = await fx.db.pool.connect();
    let locked = false;
    try {
      await blocker.query('BEGIN');
      locked = true;
      await blocker.query('LOCK TABLE outbox IN ACCESS EXCLUSIVE MODE');
      const stalled = await waitFor(
        async () => {
          const h = await health();
          return h.status === 503 ? h : undefined;
        },
        { what: '/healthz 503 while no tick completes', timeoutMs: 30_000 },
      );
      expect(stalled.body).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/no relay tick/),
      });
      expect(stalled.body.lastTickAgoMs as number).toBeGreaterThan(3_000);
      await blocker.query('ROLLBACK');
      locked = false;
    } finally {
      if (locked) await blocker.query('ROLLBACK');
      blocker.release();
    }
    await waitFor(async () => (await health()).status === 200, {
      what: '/healthz ok once ticks complete again',
      timeoutMs: 30_000,
    });
    // And the relay really works again.
    await append(fx.db, orderEvents(3));
    await waitFor(async () => (await pending(fx.db)) === 0, { what: 'the new rows relayed' });
  });
});
