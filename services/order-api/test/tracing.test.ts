import { randomBytes } from 'node:crypto';
import {
  createTopicPrefix,
  startOtlpReceiver,
  testKafka,
  type OtlpReceiver,
} from '@outbox/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './support/db.ts';
import { startService, type ServiceProcess } from './support/process.ts';

/**
 * Tracing is on only when an OTLP endpoint is configured and the SDK is not disabled.
 * What tells, from outside, whether an SDK runs in the process: the traceparent stored
 * with the event. Traced, it is the outbox.append span's (a new span id in the client's
 * trace); untraced, the client's header as it came.
 */
describe('order-api tracing, on and off (real process)', () => {
  let db: TestDb;
  let prefix: string;
  let receiver: OtlpReceiver;
  let service: ServiceProcess | undefined;

  beforeEach(async () => {
    db = await createTestDb();
    ({ prefix } = await createTopicPrefix(testKafka()));
    receiver = await startOtlpReceiver();
  });
  afterEach(async () => {
    await service?.stop();
    service = undefined;
    await receiver.close();
    await db.close();
  });

  async function order(): Promise<{ traceId: string; parent: string; stored: string }> {
    const traceId = randomBytes(16).toString('hex');
    const parent = randomBytes(8).toString('hex');
    const res = await fetch(`${service!.url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${parent}-01` },
      body: JSON.stringify({ userId: 7, sku: 'sku-1', quantity: 1 }),
    });
    expect(res.status).toBe(201);
    const { eventId } = (await res.json()) as { eventId: string };
    const { rows } = await db.pool.query<{ headers: Record<string, string> }>(
      'SELECT headers FROM outbox WHERE id = $1',
      [eventId],
    );
    return { traceId, parent, stored: rows[0]!.headers.traceparent! };
  }

  it('with OTEL_EXPORTER_OTLP_ENDPOINT: the stored traceparent is the append span’s, exported to the receiver', async () => {
    service = await startService(db, prefix, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
    const { traceId, parent, stored } = await order();
    const append = await receiver.waitFor(
      (spans) => spans.find((s) => s.traceId === traceId && s.name === 'outbox.append'),
      'the outbox.append span',
    );
    expect(stored).toBe(`00-${traceId}-${append.spanId}-01`);
    expect(append.spanId).not.toBe(parent);
    expect(append.service).toBe('order-api');
  });

  it('no OTLP endpoint: no SDK starts; the client’s traceparent is stored as it came', async () => {
    // Empty counts as unset: the parent's environment must not turn tracing on here.
    service = await startService(db, prefix, {
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
    });
    const { traceId, parent, stored } = await order();
    expect(stored).toBe(`00-${traceId}-${parent}-01`);
  });

  it('OTEL_SDK_DISABLED=true with an endpoint: off; even after the graceful shutdown the receiver got nothing', async () => {
    service = await startService(db, prefix, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SDK_DISABLED: 'true',
    });
    const { traceId, parent, stored } = await order();
    expect(stored).toBe(`00-${traceId}-${parent}-01`);
    // A graceful stop exports whatever a running SDK holds (onShutdown): none ran.
    expect(await service.stop()).toEqual({ code: 0, signal: null });
    expect(receiver.requests).toEqual([]);
  });
});
