import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';

/**
 * Tracing through the OpenTelemetry API only, as libraries do: without an SDK registered
 * by the application every call here is a no-op (non-recording spans, a propagator that
 * injects nothing), so core costs nothing and changes nothing for those who do not trace.
 * The span names and attributes are a contract (docs/tracing.md lists them).
 */
export const tracer = trace.getTracer('@outbox/core');

/** Attribute names of core's spans. */
export const ATTR = {
  eventId: 'outbox.event_id',
  eventType: 'outbox.event_type',
  aggregateType: 'outbox.aggregate_type',
  aggregateId: 'outbox.aggregate_id',
  attempts: 'outbox.attempts',
  inboxConsumer: 'outbox.inbox.consumer',
  inboxDuplicate: 'outbox.inbox.duplicate',
} as const;

/** W3C trace-context headers, the ones a stored event and a Kafka message carry. */
const TRACE_HEADERS = ['traceparent', 'tracestate'] as const;

/**
 * The trace-context headers of `ctx` (the active context by default): `traceparent` and,
 * when there is one, `tracestate`. Empty when nothing is traced (no SDK, or no span).
 */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  const out: Record<string, string> = {};
  for (const name of TRACE_HEADERS) if (carrier[name] !== undefined) out[name] = carrier[name];
  return out;
}

/** The context a stored or received `traceparent` (and `tracestate`) header continues. */
export function contextFrom(headers: Record<string, unknown> | null | undefined): Context {
  if (!headers) return ROOT_CONTEXT;
  const carrier: Record<string, string> = {};
  for (const name of TRACE_HEADERS) {
    const value = headers[name];
    const text = Buffer.isBuffer(value) ? value.toString('utf8') : value;
    if (typeof text === 'string') carrier[name] = text;
  }
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** Ends `span` with an error status and the exception recorded. */
export function failSpan(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
  span.end();
}

/**
 * Runs `fn` inside a new active span: ended when `fn` settles, with an error status if
 * it throws. The span is the parent of whatever `fn` traces (pg queries, nested spans).
 */
export function inSpan<T>(
  name: string,
  attributes: Record<string, string | number | boolean>,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      const result = await fn(span);
      span.end();
      return result;
    } catch (error) {
      failSpan(span, error);
      throw error;
    }
  });
}
