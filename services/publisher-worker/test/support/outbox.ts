import { randomUUID } from 'node:crypto';
import { OutboxWriter, withTransaction, type OutboxEvent } from '@outbox/core';
import { FailurePoints, validateEvent } from '@outbox/lab';
import type { Kafka } from 'kafkajs';
import { afterEach, beforeEach, inject } from 'vitest';
import {
  createTestDb,
  createTopicPrefix,
  type ServiceProcess,
  stopAll,
  type TestDb,
} from '@outbox/testkit';

const writer = new OutboxWriter({ validate: validateEvent });

/** The events of one order's life: OrderCreated (seq 1), then OrderPaid seq 2…n. */
export function orderEvents(count: number, orderId = randomUUID()): OutboxEvent[] {
  return Array.from({ length: count }, (_, i) =>
    i === 0
      ? {
          aggregateType: 'order',
          aggregateId: orderId,
          eventType: 'OrderCreated',
          payload: { orderId, userId: 1, sku: 'sku-1', quantity: 1, seq: 1, source: 'api' },
        }
      : {
          aggregateType: 'order',
          aggregateId: orderId,
          eventType: 'OrderPaid',
          payload: { orderId, seq: i + 1, paidAt: new Date().toISOString() },
        },
  );
}

/** Appends events in one business transaction (as order-api would); returns their ids. */
export async function append(db: TestDb, events: OutboxEvent[]): Promise<string[]> {
  const appended = await withTransaction(db.pool, (c) => writer.appendBatch(c, events));
  return appended.map((a) => a.id);
}

/** Outbox rows not yet sent. */
export async function pending(db: TestDb): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL',
  );
  return rows[0]?.n ?? 0;
}

/** A FailurePoints handle on the test's schema (arming notifies the workers). */
export function failurePointsOf(db: TestDb): FailurePoints {
  return new FailurePoints(db.pool);
}

/** The env a worker process needs for the test's schema and topics. */
export function workerEnv(
  db: TestDb,
  prefix: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: db.databaseUrl,
    DATABASE_SCHEMA: db.schema,
    KAFKA_BROKERS: inject('kafkaBrokers').join(','),
    TOPIC_PREFIX: prefix,
    POLL_INTERVAL_MS: '500',
    // The tests break things: failure points and faulty sockets (off by default).
    CHAOS_ENABLED: 'true',
    ...extra,
  };
}

/** What a worker test starts from: its own schema, a fresh 6-partition topic prefix. */
export interface WorkerFixture {
  db: TestDb;
  prefix: string;
  /** The prefix's orders topic. */
  topic: string;
  /** Workers the test started: stopped after it, before its schema is dropped. */
  procs: ServiceProcess[];
}

/**
 * Registers the describe block's beforeEach/afterEach and returns the fixture they fill:
 * read its fields inside a test, never at describe time (they are set before each test).
 */
export function useWorkerFixture(kafka: Kafka): WorkerFixture {
  const fixture: Partial<WorkerFixture> & Pick<WorkerFixture, 'procs'> = { procs: [] };
  beforeEach(async () => {
    fixture.db = await createTestDb();
    ({ prefix: fixture.prefix, topic: fixture.topic } = await createTopicPrefix(kafka, {
      partitions: 6,
    }));
  });
  afterEach(async () => {
    await stopAll(fixture.procs.splice(0));
    await fixture.db?.close();
  });
  return fixture as WorkerFixture;
}
