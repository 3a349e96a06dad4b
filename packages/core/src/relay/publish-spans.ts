import { context, SpanKind, trace, type Span } from '@opentelemetry/api';
import { ATTR, contextFrom, failSpan, traceHeaders, tracer } from '../tracing.ts';
import type { RoutedRow } from './publish.ts';

/**
 * One PRODUCER span per event and send: `outbox.publish <topic>`, a child of the context
 * stored with the event (the writer's `outbox.append` span, through its `traceparent`),
 * started right before the produce request and ended at Kafka's acknowledgement (acks =
 * all), or with an error status when the send fails. A row sent again (a retry, a search
 * for a refused row, a relay that died before marking it sent) gets a span per send.
 * The message carries the span's own trace context, so the consumer's span is its child.
 */
export class PublishSpans {
  private readonly spans = new Map<RoutedRow, Span>();

  constructor(rows: readonly RoutedRow[]) {
    for (const routed of rows) {
      const { row, topic } = routed;
      const span = tracer.startSpan(
        `outbox.publish ${topic}`,
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            'messaging.system': 'kafka',
            'messaging.operation.type': 'send',
            'messaging.operation.name': 'send',
            'messaging.destination.name': topic,
            'messaging.kafka.message.key': row.aggregate_id,
            'messaging.message.id': row.id,
            'messaging.batch.message_count': rows.length,
            [ATTR.eventId]: row.id,
            [ATTR.eventType]: row.event_type,
            [ATTR.aggregateType]: row.aggregate_type,
            [ATTR.aggregateId]: row.aggregate_id,
            [ATTR.attempts]: row.attempts,
          },
        },
        contextFrom(row.headers),
      );
      this.spans.set(routed, span);
    }
  }

  /**
   * The trace headers the row's message carries: its span's context, sampled or not, so
   * the consumer follows the same sampling decision (none without an SDK: the stored
   * headers then go on unchanged).
   */
  headersOf(routed: RoutedRow): Record<string, string> {
    const span = this.spans.get(routed);
    return span ? traceHeaders(trace.setSpan(context.active(), span)) : {};
  }

  /** Kafka acknowledged every message of the send. */
  acknowledged(): void {
    for (const span of this.spans.values()) span.end();
  }

  /** The send failed: every span ends with the error (the rows are judged by the relay). */
  failed(error: unknown): void {
    for (const span of this.spans.values()) failSpan(span, error);
  }
}
