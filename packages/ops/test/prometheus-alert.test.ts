import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OutboxMetrics, OutboxRelay } from '@outbox/core';
import { ensurePrometheus, startPrometheus, type RunningPrometheus } from '@outbox/dev-stack';
import { kafkaThroughProxy, type KafkaThroughProxy } from '@outbox/fault-proxy';
import { createTestDb, testKafka, waitFor, type TestDb } from '@outbox/testkit';
import type { Producer } from 'kafkajs';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { age, appendEvents } from './support/db.ts';
import { createTopic, idempotentProducer } from './support/kafka.ts';

const rulesFile = fileURLToPath(new URL('../alerts/outbox.rules.yml', import.meta.url));

interface Alert {
  labels: { alertname: string };
  state: 'pending' | 'firing';
}

async function alerts(prometheus: RunningPrometheus): Promise<Alert[]> {
  const res = await fetch(`${prometheus.url}/api/v1/alerts`);
  const body = (await res.json()) as { data: { alerts: Alert[] } };
  return body.data.alerts;
}

/**
 * The lag alert for real: Prometheus (Debian's 2.42) scrapes a relay's /metrics every
 * second with outbox.rules.yml loaded, its `for:` shortened to 3 s so the test does
 * not wait minutes; expressions and thresholds are the file's. Kafka goes away behind
 * a fault proxy (every link reset). The pending event is backdated 2 minutes: it
 * stands for an outage that long, since outbox_lag_seconds is now() − the oldest
 * pending created_at (the metric is read from PostgreSQL at scrape time). It cannot
 * leave while the link is down, so OutboxLagHigh goes pending, then firing; when the
 * link comes back the relay drains it and the alert resolves.
 */
describe('OutboxLagHigh fires in Prometheus during a Kafka outage and resolves after the drain', () => {
  let db: TestDb;
  let link: KafkaThroughProxy;
  let producer: Producer;
  let relay: OutboxRelay;
  let server: Server;
  let prometheus: RunningPrometheus;

  beforeAll(async () => {
    const binaries = ensurePrometheus((line) => process.stderr.write(`[prometheus] ${line}\n`));
    db = await createTestDb({ max: 4 });
    const topic = await createTopic(testKafka(), 'orders');
    const [broker] = inject('kafkaBrokers');
    link = await kafkaThroughProxy(broker!, 'alert-test');
    producer = await idempotentProducer(link.kafka);
    const registry = new Registry();
    const metrics = new OutboxMetrics(registry, db.pool);
    relay = new OutboxRelay({
      pool: db.pool,
      producer,
      topics: { order: topic },
      metrics,
      // A send cut by a reset has an unknown outcome: the relay sends again only on a
      // new producer (as publisher-worker does). Without this it stops relaying.
      renewProducer: async (broken) => {
        const renewed = await idempotentProducer(link.kafka);
        producer = renewed;
        await broken.disconnect().catch(() => undefined);
        return renewed;
      },
      pollIntervalMs: 200,
      failureBackoffMaxMs: 500,
    });
    await relay.start();
    server = createServer((_req, res) => {
      void registry.metrics().then((text) => {
        res.setHeader('content-type', registry.contentType);
        res.end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };

    const dir = mkdtempSync(join(tmpdir(), 'prometheus-'));
    const rules = readFileSync(rulesFile, 'utf8').replace(/^(\s+)for: \S+$/gm, '$1for: 3s');
    writeFileSync(join(dir, 'outbox.rules.yml'), rules);
    prometheus = await startPrometheus({
      binaries,
      dir,
      targets: [{ job: 'publisher-worker', address: `127.0.0.1:${port}` }],
      ruleFiles: [join(dir, 'outbox.rules.yml')],
      scrapeInterval: '1s',
    });
  }, 300_000);

  afterAll(async () => {
    await prometheus?.stop();
    await relay?.stop();
    await producer?.disconnect().catch(() => undefined);
    await link?.proxy.close();
    server?.close();
    await db?.close();
  });

  it('pending, firing while the events cannot leave, resolved after the drain', async () => {
    const lag = async () =>
      (await alerts(prometheus)).find((a) => a.labels.alertname === 'OutboxLagHigh');
    // Up and healthy first: the relay reports ticks, no lag alert.
    await waitFor(async () => (await alerts(prometheus)).length === 0 || undefined, {
      what: 'no alert while the relay is healthy',
      timeoutMs: 30_000,
    });

    link.proxy.setMode({ kind: 'reset' });
    const ids = await appendEvents(db, 'order-lagging', 3);
    await age(db, ids, 120, false);

    const seen = new Set<string>();
    await waitFor(
      async () => {
        const alert = await lag();
        if (alert) seen.add(alert.state);
        return alert?.state === 'firing' || undefined;
      },
      { what: 'OutboxLagHigh firing', timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(seen.has('pending')).toBe(true);
    const { rows } = await db.pool.query<{ pending: string }>(
      'SELECT count(*) AS pending FROM outbox WHERE sent_at IS NULL',
    );
    expect(Number(rows[0]?.pending)).toBe(3);

    link.proxy.setMode({ kind: 'pass' });
    await waitFor(
      async () => {
        const { rows: left } = await db.pool.query<{ pending: string }>(
          'SELECT count(*) AS pending FROM outbox WHERE sent_at IS NULL',
        );
        return Number(left[0]?.pending) === 0 || undefined;
      },
      { what: 'the drain after the outage', timeoutMs: 60_000 },
    );
    await waitFor(async () => ((await lag()) === undefined ? true : undefined), {
      what: 'OutboxLagHigh resolved',
      timeoutMs: 30_000,
    });
  });
});
