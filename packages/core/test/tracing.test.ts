import { randomBytes } from 'node:crypto';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handleOnce, withTransaction } from '../src/index.ts';
import {
  createTestDb,
  createTopics,
  readTopic,
  type TestDb,
  testKafka,
} from '../../testkit/src/index.ts';
import { orderEvent, RelayHarness } from './support/relay.ts';

/**
 * Core's spans as an adopter sees them: an application registers its own SDK (here an
 * in-memory exporter, in this process) and core's writer, relay and inbox join its
 * traces through @opentelemetry/api alone.
 */
describe('core tracing with an SDK registered by the application', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const contextManager = new AsyncLocalStorageContextManager();
  const kafka = testKafka();
  let db: TestDb;
  let h: RelayHarness;

  beforeAll(() => {
    trace.setGlobalTracerProvider(provider);
    context.setGlobalContextManager(contextManager.enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterAll(async () => {
    trace.disable();
    context.disable();
    propagation.disable();
    await provider.shutdown();
  });
  beforeEach(async () => {
    exporter.reset();
    db = await createTestDb();
    h = new RelayHarness(db, kafka);
  });
  afterEach(async () => {
    await h.close();
    await db.close();
  });

  const spans = (name: string): ReadableSpan[] =>
    exporter.getFinishedSpans().filter((s) => s.name === name);
  const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

  it('append stores its span’s traceparent; the publish span is its child and the message carries the publish span', async () => {
    const topics = await createTopics(kafka, ['orders']);
    const tracer = trace.getTracer('test');
    const [id] = await tracer.startActiveSpan('request', async (request) => {
      const ids = await h.append([orderEvent('order-1', 1)]);
      request.end();
      return ids;
    });
    const append = spans('outbox.append')[0]!;
    expect(parentOf(append)).toBe(spans('request')[0]!.spanContext().spanId);
    expect(append.attributes).toMatchObject({
      'outbox.event_id': id,
      'outbox.aggregate_id': 'order-1',
      'outbox.event_type': 'OrderEvent',
    });
    const { traceId, spanId } = append.spanContext();
    const { rows } = await db.pool.query<{ headers: Record<string, string> }>(
      'SELECT headers FROM outbox WHERE id = $1',
      [id],
    );
    expect(rows[0]!.headers).toEqual({
      correlationId: 'corr-order-1-1',
      traceparent: `00-${traceId}-${spanId}-01`,
    });

    const relay = await h.relay({ topics: { order: topics.orders! } });
    expect(await relay.tick()).toMatchObject({ sent: 1 });
    const publish = spans(`outbox.publish ${topics.orders!}`)[0]!;
    expect(publish.spanContext().traceId).toBe(traceId);
    expect(parentOf(publish)).toBe(spanId);
    expect(publish.status.code).toBe(0);
    expect(publish.attributes).toMatchObject({
      'outbox.event_id': id,
      'messaging.destination.name': topics.orders,
      'messaging.kafka.message.key': 'order-1',
    });
    const [message] = await readTopic(kafka, topics.orders!, 1);
    expect(message!.headers.traceparent).toBe(`00-${traceId}-${publish.spanContext().spanId}-01`);
  });

  it('a caller’s own traceparent is kept as given', async () => {
    const given = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
    const [id] = await trace.getTracer('test').startActiveSpan('request', async (request) => {
      const ids = await h.append([
        { ...orderEvent('order-2', 1), headers: { traceparent: given } },
      ]);
      request.end();
      return ids;
    });
    const { rows } = await db.pool.query<{ headers: Record<string, string> }>(
      'SELECT headers FROM outbox WHERE id = $1',
      [id],
    );
    expect(rows[0]!.headers.traceparent).toBe(given);
  });

  it('a send Kafka refuses ends its publish span with an error status', async () => {
    // No such topic, and the dev-stack's broker does not create topics on first use.
    const topic = `test.absent.${randomBytes(4).toString('hex')}`;
    await h.append([orderEvent('order-3', 1)]);
    const relay = await h.relay({
      topics: { order: topic },
      renewProducer: async (broken) => {
        await broken.disconnect();
        return h.producer();
      },
    });
    await expect(relay.tick()).rejects.toThrow();
    const [publish] = spans(`outbox.publish ${topic}`);
    expect(publish?.status.code).toBe(2);
  });

  it('inbox.check says whether the delivery was a duplicate, under the delivery’s context', async () => {
    const tracer = trace.getTracer('test');
    const delivery = { consumer: 'c', eventId: 'e-1', topic: 't' };
    for (let i = 0; i < 2; i += 1) {
      await tracer.startActiveSpan(`delivery ${i}`, async (span) => {
        await withTransaction(db.pool, (client) => handleOnce(client, delivery, async () => 1));
        span.end();
      });
    }
    const checks = spans('inbox.check');
    expect(checks.map((c) => c.attributes['outbox.inbox.duplicate'])).toEqual([false, true]);
    expect(checks.map(parentOf)).toEqual(
      ['delivery 0', 'delivery 1'].map((n) => spans(n)[0]!.spanContext().spanId),
    );
  });
});
