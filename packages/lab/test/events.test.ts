import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  checkCompatible,
  InvalidEventError,
  OutboxWriter,
  UnknownEventError,
  withTransaction,
} from '@outbox/core';
import {
  eventSchemas,
  OrderCreatedV1,
  OrderCreatedV2,
  readEvent,
  validateEvent,
} from '../src/index.ts';
import { createTestDb, type TestDb } from '../../testkit/src/index.ts';

const v1 = () => ({ orderId: randomUUID(), userId: 7, sku: 'sku-1', quantity: 2, seq: 1 });

describe('event schemas and their evolution', () => {
  it('append validates against the latest schema and stamps the version', () => {
    const event = validateEvent({
      aggregateType: 'order',
      aggregateId: 'x',
      eventType: 'OrderCreated',
      payload: { ...v1(), source: 'api' },
    });
    expect(event.eventVersion).toBe(2);
    expect(() =>
      validateEvent({
        aggregateType: 'order',
        aggregateId: 'x',
        eventType: 'OrderCreated',
        payload: v1(),
      }),
    ).toThrow(InvalidEventError);
    expect(() =>
      validateEvent({ aggregateType: 'order', aggregateId: 'x', eventType: 'Nope', payload: {} }),
    ).toThrow(/no schema/);
  });

  it('the consumer upcasts v1 to v2 and reads v2 as is', () => {
    const payload = v1();
    expect(readEvent('OrderCreated', 1, payload)).toEqual({
      eventType: 'OrderCreated',
      payload: { ...payload, source: 'unknown' },
    });
    expect(readEvent('OrderCreated', 2, { ...payload, source: 'traffic' }).payload).toMatchObject({
      source: 'traffic',
    });
    expect(() => readEvent('Unheard', 1, {})).toThrow(UnknownEventError);
    expect(() => readEvent('OrderCreated', 1, { orderId: 'not-a-uuid' })).toThrow(
      InvalidEventError,
    );
  });

  it('an old consumer (knows only v1) is not broken by a v2 event', () => {
    const oldConsumer = { OrderCreated: { 1: OrderCreatedV1 } };
    const payload = { ...v1(), source: 'api' };
    const read = readEvent('OrderCreated', 2, payload, oldConsumer);
    expect(read.payload).toEqual(v1Of(payload));
  });

  it('a v1 event still in the outbox is handled after the upgrade', async () => {
    db = await createTestDb();
    // Written by the old producer (v1 schema only)…
    const oldWriter = new OutboxWriter({
      validate: (e) => validateEvent(e, { OrderCreated: { 1: OrderCreatedV1 } }),
    });
    const payload = v1();
    await withTransaction(db.pool, (c) =>
      oldWriter.append(c, {
        aggregateType: 'order',
        aggregateId: payload.orderId,
        eventType: 'OrderCreated',
        payload,
      }),
    );
    // …read after the upgrade by the new consumer (v1 and v2).
    const { rows } = await db.pool.query('SELECT event_type, event_version, payload FROM outbox');
    expect(rows[0].event_version).toBe(1);
    const read = readEvent(rows[0].event_type, rows[0].event_version, rows[0].payload);
    expect(read.payload).toEqual({ ...payload, source: 'unknown' });
  });

  it('the compatibility check accepts an added field and refuses a removed or retyped one', () => {
    expect(checkCompatible(OrderCreatedV1, OrderCreatedV2)).toEqual([]);
    const removed = OrderCreatedV1.omit({ quantity: true });
    expect(checkCompatible(OrderCreatedV1, removed)).toEqual([
      expect.objectContaining({ field: 'quantity', problem: 'removed' }),
    ]);
    const retyped = OrderCreatedV1.extend({ quantity: z.string() });
    expect(checkCompatible(OrderCreatedV1, retyped)).toEqual([
      expect.objectContaining({ field: 'quantity', problem: 'retyped' }),
    ]);
    const loosened = OrderCreatedV1.extend({ sku: z.string().optional() });
    expect(checkCompatible(OrderCreatedV1, loosened)).toEqual([
      expect.objectContaining({ field: 'sku', problem: 'removed' }),
    ]);
  });

  it('every shipped version is compatible with the one before it', () => {
    for (const [type, versions] of Object.entries(eventSchemas)) {
      const ordered = Object.entries(versions).sort(([a], [b]) => Number(a) - Number(b));
      for (let i = 1; i < ordered.length; i += 1) {
        const problems = checkCompatible(ordered[i - 1]![1], ordered[i]![1]);
        expect(problems, `${type} v${ordered[i]![0]}`).toEqual([]);
      }
    }
  });

  let db: TestDb | undefined;
  beforeEach(() => {
    db = undefined;
  });
  afterEach(async () => db?.close());
});

function v1Of(p: Record<string, unknown>) {
  const { source: _source, ...rest } = p;
  return rest;
}
