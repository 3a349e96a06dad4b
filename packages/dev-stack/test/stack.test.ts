import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackStatus, startStack, stopStack, type StackEndpoints } from '../src/index.ts';
import { readState } from '../src/state.ts';
import { findRepoRoot } from '../src/paths.ts';

// The repo's default .data dir: shares the jar cache and, when a developer already runs the
// stack, reuses it instead of starting a second one. An explicit dataDir keeps the tests
// independent of a developer's OUTBOX_DATA_DIR.
const dataDir = join(findRepoRoot(), '.data');
const opts = { dataDir, env: { ...process.env, DATABASE_URL: '', KAFKA_BROKERS: '' } };
const lines: string[] = [];
let endpoints: StackEndpoints;
let wasRunning = false;

beforeAll(async () => {
  const before = await stackStatus(opts);
  wasRunning = before.postgres.state === 'up' && before.kafka.state === 'up';
  endpoints = await startStack({ ...opts, log: (line) => lines.push(line) });
});

afterAll(async () => {
  // Leave a stack that a developer started running; stop only what this test started.
  if (!wasRunning) await stopStack({ ...opts, log: () => undefined });
});

describe('startStack', () => {
  it('serves PostgreSQL queries on the outbox_lab database', async () => {
    const client = new pg.Client({ connectionString: endpoints.databaseUrl });
    await client.connect();
    try {
      const result = await client.query<{ db: string; one: number }>(
        'SELECT current_database() AS db, 1 AS one',
      );
      expect(result.rows[0]).toEqual({ db: 'outbox_lab', one: 1 });
    } finally {
      await client.end();
    }
  });

  it('round-trips a Kafka message through a consumer group', async () => {
    const kafka = new Kafka({ brokers: endpoints.kafkaBrokers, logLevel: logLevel.NOTHING });
    const topic = `dev-stack-test-${Date.now()}`;
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();

    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: [{ key: 'k', value: 'hello' }] });
    await producer.disconnect();

    const consumer = kafka.consumer({ groupId: `${topic}-group` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const received = await new Promise<string>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => resolve(message.value?.toString() ?? ''),
      });
    });
    await consumer.disconnect();
    expect(received).toBe('hello');
  });

  it('is idempotent: a second start reuses the same processes', async () => {
    const pidsBefore = await readState(join(dataDir, 'stack.json'));
    const again = await startStack({ ...opts, log: () => undefined });
    const pidsAfter = await readState(join(dataDir, 'stack.json'));
    expect(again).toEqual(endpoints);
    expect(pidsAfter.postgres?.pid).toBe(pidsBefore.postgres?.pid);
    expect(pidsAfter.kafka?.pid).toBe(pidsBefore.kafka?.pid);
    expect(pidsAfter.kafka?.pid).toBeGreaterThan(0);
  });

  it('reports both parts up', async () => {
    const status = await stackStatus(opts);
    expect(status.postgres).toMatchObject({ state: 'up', external: false });
    expect(status.kafka).toMatchObject({ state: 'up', external: false });
    expect(status.kafka.url).toBe(endpoints.kafkaBrokers.join(','));
  });

  it('uses DATABASE_URL and KAFKA_BROKERS when they are set', async () => {
    const external = await mkdtemp(join(tmpdir(), 'dev-stack-ext-'));
    try {
      const env = {
        ...process.env,
        DATABASE_URL: endpoints.databaseUrl,
        KAFKA_BROKERS: endpoints.kafkaBrokers.join(','),
      };
      const got = await startStack({ env, dataDir: external, log: () => undefined });
      expect(got).toEqual(endpoints);
      const status = await stackStatus({ env, dataDir: external });
      expect(status.postgres).toMatchObject({ state: 'up', external: true });
      expect(status.kafka).toMatchObject({ state: 'up', external: true });
    } finally {
      await rm(external, { recursive: true, force: true });
    }
  });

  it('names the missing tools when java and mvn are not on PATH', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'dev-stack-notools-'));
    try {
      const env = { DATABASE_URL: endpoints.databaseUrl, PATH: '/nonexistent' };
      await expect(startStack({ env, dataDir: empty, log: () => undefined })).rejects.toThrow(
        /java and mvn.*apt-get install openjdk-17-jre-headless maven.*KAFKA_BROKERS/,
      );
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
