import { FailurePoint } from '@outbox/lab';
import { describe, expect, it } from 'vitest';
import { eventIds, readTopic, sleep, startService, testKafka, waitFor } from '@outbox/testkit';
import {
  append,
  failurePointsOf,
  orderEvents,
  pending,
  workerEnv,
  useWorkerFixture,
} from './support/outbox.ts';

describe('publisher-worker failure points', () => {
  const kafka = testKafka();
  const fx = useWorkerFixture(kafka);

  it('worker.kill_mid_publish: SIGKILL after the ack; the restarted worker publishes the batch again', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 10; i += 1) ids.push(...(await append(fx.db, orderEvents(3))));
    await failurePointsOf(fx.db).arm(FailurePoint.workerKillMidPublish, { mode: 'once' });

    const first = await startService(workerEnv(fx.db, fx.prefix, { REPLICA_ID: 'w1' }));
    fx.procs.push(first);
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(first.lines.some((l) => /kill_mid_publish/.test(String(l.msg)))).toBe(true);
    // Kafka acked the batch, PostgreSQL never heard of it: every row is still pending.
    expect(await pending(fx.db)).toBe(30);

    const second = await startService(workerEnv(fx.db, fx.prefix, { REPLICA_ID: 'w1' }));
    fx.procs.push(second);
    await waitFor(async () => (await pending(fx.db)) === 0, { what: 'republished' });

    const received = await readTopic(kafka, fx.topic, { until: (r) => r.length >= 60 });
    expect(eventIds(received)).toEqual(new Set(ids));
    // At-least-once: the killed batch is on the topic twice (the inbox's job downstream).
    expect(received.length - eventIds(received).size).toBeGreaterThanOrEqual(1);
    const { rows } = await fx.db.pool.query<{ fired: number; mode: string }>(
      'SELECT fired, mode FROM failure_points WHERE name = $1',
      [FailurePoint.workerKillMidPublish],
    );
    expect(rows[0]).toEqual({ fired: 1, mode: 'off' });
  });

  it('worker.kafka_outage: rows wait during the outage and drain after it, none lost', async () => {
    const worker = await startService(workerEnv(fx.db, fx.prefix, { REPLICA_ID: 'w1' }));
    fx.procs.push(worker);
    const ids = await append(fx.db, orderEvents(5));
    await waitFor(async () => (await pending(fx.db)) === 0, { what: 'warm-up drained' });

    const until = Date.now() + 4_000;
    await failurePointsOf(fx.db).arm(FailurePoint.workerKafkaOutage, {
      mode: 'on',
      params: { until },
    });
    await worker.waitForLog(/Kafka connections cut/, 5_000);
    // New business keeps writing during the outage; nothing can leave.
    const samples: number[] = [];
    while (Date.now() < until - 500) {
      ids.push(...(await append(fx.db, orderEvents(2))));
      await sleep(300);
      samples.push(await pending(fx.db));
    }
    expect(samples.length).toBeGreaterThan(3);
    expect(samples.every((n) => n > 0)).toBe(true);
    // The ticks failed at relay level: no row was charged an attempt.
    const { rows } = await fx.db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM outbox WHERE attempts > 0',
    );
    expect(rows[0]?.n).toBe(0);

    await waitFor(async () => (await pending(fx.db)) === 0, {
      what: 'drained after the outage',
      timeoutMs: 40_000,
    });
    const received = await readTopic(kafka, fx.topic, {
      until: (r) => eventIds(r).size >= ids.length,
    });
    expect(eventIds(received)).toEqual(new Set(ids));
    const metrics = await (await fetch(`${worker.url}/metrics`)).text();
    expect(metrics).toMatch(/outbox_publish_errors_total\{kind="relay"\} [1-9]/);
  });
});
