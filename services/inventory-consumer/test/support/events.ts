import { randomUUID } from 'node:crypto';
import { toMessage, type OutboxRow } from '@outbox/core';
import type { Kafka, Message, Producer } from 'kafkajs';
import { inject } from 'vitest';
import type { TestDb } from '@outbox/testkit';

let nextId = 1_000_000;

/** A message in the relay's exact shape (core's toMessage), as if relayed from the outbox. */
export function relayMessage(
  eventType: string,
  payload: Record<string, unknown>,
  { version = eventType === 'OrderCreated' ? 2 : 1, id = String((nextId += 1)) } = {},
): Message {
  const row: OutboxRow = {
    id,
    aggregate_type: 'order',
    aggregate_id: String(payload.orderId),
    event_type: eventType,
    event_version: version,
    payload: JSON.stringify(payload),
    headers: { correlation_id: `corr-${id}` },
    created_at: new Date(),
    attempts: 0,
  };
  return toMessage(row);
}

/** OrderCreated v2 of a new order (or the given one). */
export function orderCreated(
  fields: Partial<{ orderId: string; sku: string; quantity: number; seq: number }> = {},
): Message {
  return relayMessage('OrderCreated', {
    orderId: randomUUID(),
    userId: 7,
    sku: 'sku-1',
    quantity: 2,
    seq: 1,
    source: 'api',
    ...fields,
  });
}

/** Connected producer, closed by the caller. */
export async function testProducer(kafka: Kafka): Promise<Producer> {
  const producer = kafka.producer();
  await producer.connect();
  return producer;
}

export async function produce(
  producer: Producer,
  topic: string,
  messages: Message[],
): Promise<void> {
  // One send per message, in order: same key → same partition → the order given here.
  for (const message of messages) await producer.send({ topic, acks: -1, messages: [message] });
}

/** The env a consumer process needs for the test's schema and topics. */
export function consumerEnv(
  db: TestDb,
  prefix: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: db.databaseUrl,
    DATABASE_SCHEMA: db.schema,
    KAFKA_BROKERS: inject('kafkaBrokers').join(','),
    TOPIC_PREFIX: prefix,
    // The tests break things: the failure points are followed (off by default).
    CHAOS_ENABLED: 'true',
    ...extra,
  };
}

export interface DeliveryRow {
  event_id: string;
  event_type: string;
  aggregate_id: string;
  seq: number | null;
  outcome: string;
  fifo_violation: boolean;
}

/** consumer_deliveries in arrival order. */
export async function deliveries(db: TestDb): Promise<DeliveryRow[]> {
  const { rows } = await db.pool.query<DeliveryRow>(
    'SELECT event_id, event_type, aggregate_id, seq, outcome, fifo_violation FROM consumer_deliveries ORDER BY id',
  );
  return rows;
}

export async function reservations(
  db: TestDb,
  orderId: string,
): Promise<{ sku: string; quantity: number; event_id: string; released: boolean }[]> {
  const { rows } = await db.pool.query<{
    sku: string;
    quantity: number;
    event_id: string;
    released: boolean;
  }>(
    'SELECT sku, quantity, event_id, released_at IS NOT NULL AS released FROM reservations WHERE order_id = $1 ORDER BY id',
    [orderId],
  );
  return rows;
}

export async function stock(
  db: TestDb,
  sku: string,
): Promise<{ available: number; reserved: number }> {
  const { rows } = await db.pool.query<{ available: number; reserved: number }>(
    'SELECT available, reserved FROM inventory WHERE sku = $1',
    [sku],
  );
  return rows[0]!;
}
