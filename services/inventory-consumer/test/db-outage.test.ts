import { join } from 'node:path';
import { findRepoRoot, restartPostgres, startStack, stopStack } from '@outbox/dev-stack';
import type { Producer } from 'kafkajs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import {
  createTestDb,
  createTopicPrefix,
  sleep,
  startService,
  stopAll,
  type ServiceProcess,
  type TestDb,
  testKafka,
  waitFor,
} from '@outbox/testkit';
import { reportOnFailure } from './support/diagnostics.ts';
import { orderCreated, testProducer } from './support/events.ts';

/**
 * The issue's sequence on the real stack: the consumer runs under traffic, PostgreSQL
 * stops (an immediate shutdown) and stays down longer than the group's session timeout
 * (10 s), so eachMessage keeps failing and the member is expelled; then PostgreSQL
 * comes back. This file restarts PostgreSQL, so it runs one of its own (`.data/
 * consumer-outage`, the shared broker): the other suites' database is not touched.
 */
const stack = {
  dataDir: join(findRepoRoot(), '.data', 'consumer-outage'),
  env: { ...process.env, DATABASE_URL: '', KAFKA_BROKERS: inject('kafkaBrokers').join(',') },
  log: (line: string) => process.stderr.write(`[outage-stack] ${line}\n`),
};
/** Longer than the 10 s session timeout, with room for the retries' backoff. */
const OUTAGE_MS = 25_000;

describe('inventory-consumer: a long PostgreSQL outage under traffic', () => {
  const kafka = testKafka();
  let databaseUrl: string;
  let db: TestDb;
  let prefix: string;
  let topic: string;
  let producer: Producer;
  const procs: ServiceProcess[] = [];

  beforeAll(async () => {
    databaseUrl = (await startStack(stack)).databaseUrl;
  });
  afterAll(() => stopStack(stack));
  beforeEach(async () => {
    db = await createTestDb({ databaseUrl, stock: 1_000_000 });
    ({ prefix, topic } = await createTopicPrefix(kafka, { deadLetter: true }));
    producer = await testProducer(kafka);
  });
  afterEach(async () => {
    await stopAll(procs);
    await producer.disconnect();
    await db.close();
  });

  it('the consumer resumes by itself and applies every event; /healthz says unhealthy while it is stalled', async () => {
    const consumer = await startService({
      DATABASE_URL: databaseUrl,
      DATABASE_SCHEMA: db.schema,
      KAFKA_BROKERS: inject('kafkaBrokers').join(','),
      TOPIC_PREFIX: prefix,
      // Not vitest's 'test': kafkajs then swaps its retry defaults (15 fast retries instead
      // of 5 with backoff up to 30 s), and the demo runs without NODE_ENV.
      NODE_ENV: 'production',
      // A stall (lag and no progress) is reported after 5 s rather than the default.
      CONSUMER_STALL_MS: '5000',
    });
    procs.push(consumer);
    reportOnFailure(consumer);

    // Traffic: ~25 events/s, each of a new order, for the whole test.
    const sent: string[] = [];
    let sending = true;
    const traffic = (async () => {
      while (sending) {
        const message = orderCreated({ quantity: 1 });
        await producer.send({ topic, acks: -1, messages: [message] });
        sent.push(String(message.headers!.event_id));
        await sleep(40);
      }
    })();
    // /healthz, sampled every 250 ms from start to end.
    const health: { at: number; status: number; body: string }[] = [];
    let probing = true;
    const prober = (async () => {
      while (probing) {
        const at = Date.now();
        const res = await fetch(`${consumer.url}/healthz`).catch(() => undefined);
        if (res) health.push({ at, status: res.status, body: await res.text() });
        await sleep(250);
      }
    })();
    const applied = async () =>
      Number(
        (await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM inbox')).rows[0]?.n ?? 0,
      );

    try {
      await waitFor(async () => (await applied()) >= 50, {
        what: 'the consumer applying events under traffic',
        timeoutMs: 60_000,
      });
      const down = Date.now();
      await restartPostgres({ ...stack, mode: 'immediate', downMs: OUTAGE_MS });
      const up = Date.now();
      // Traffic goes on for a while after the database is back, then stops.
      await sleep(5_000);
      sending = false;
      await traffic;

      const total = sent.length;
      let last = -1;
      await waitFor(async () => (last = await applied()) >= total, {
        what: `all ${total} events applied`,
        timeoutMs: 120_000,
      }).catch(() => undefined);
      expect({ applied: last, sent: total }).toEqual({ applied: total, sent: total });
      const { rows } = await db.pool.query('SELECT reason FROM consumer_dead_letters');
      expect(rows).toEqual([]);

      // While it could not apply anything, /healthz said so; now that it caught up, ok.
      const stalled = health.filter((h) => h.at >= down && h.at <= up + 5_000);
      expect(stalled.some((h) => h.status === 503)).toBe(true);
      await waitFor(async () => (await fetch(`${consumer.url}/healthz`)).status === 200, {
        what: '/healthz ok once caught up',
        timeoutMs: 30_000,
      });
      expect(consumer.child.exitCode).toBeNull();
    } finally {
      sending = false;
      probing = false;
      await traffic.catch(() => undefined);
      await prober;
    }
  }, 300_000);
});
