import { contextFrom } from '@outbox/core';
import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import type { KafkaMessage } from 'kafkajs';
import type { DeliveryOutcome } from './deliveries.ts';

const tracer = trace.getTracer('@outbox/inventory-consumer');

/**
 * The CONSUMER spans of a chunk: one `<topic> process` span per message, a child of the
 * message's `traceparent` (the relay's publish span), so each order's trace goes on into
 * this service. A chunk is applied in ONE transaction, so its messages' spans honestly
 * share the chunk's time: each starts when the chunk is taken up and ends when the
 * chunk's transaction has committed (or failed), and `messaging.batch.message_count`
 * says how many shared it. What is per message lies below: `inbox.check` (its verdict)
 * and `inventory.reserve` / `inventory.release` (its effect's statement).
 * Without an OpenTelemetry SDK these are non-recording spans that cost next to nothing.
 */
export class ChunkSpans {
  private readonly spans = new Map<KafkaMessage, Span>();

  constructor(topic: string, partition: number, messages: readonly KafkaMessage[]) {
    for (const message of messages) {
      const span = tracer.startSpan(
        `${topic} process`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            'messaging.system': 'kafka',
            'messaging.operation.type': 'process',
            'messaging.operation.name': 'process',
            'messaging.destination.name': topic,
            'messaging.destination.partition.id': String(partition),
            'messaging.kafka.offset': Number(message.offset),
            'messaging.batch.message_count': messages.length,
            ...(message.key ? { 'messaging.kafka.message.key': message.key.toString() } : {}),
          },
        },
        contextFrom(message.headers),
      );
      this.spans.set(message, span);
    }
  }

  /** The message's span as a parent context (for its inbox check and effect). */
  contextOf(message: KafkaMessage): Context {
    const span = this.spans.get(message);
    return span ? trace.setSpan(context.active(), span) : context.active();
  }

  /** The message was applied (its chunk committed): what the inbox made of it. */
  applied(message: KafkaMessage, eventId: string, outcome: DeliveryOutcome): void {
    this.spans.get(message)?.setAttributes({
      'outbox.event_id': eventId,
      'messaging.message.id': eventId,
      'outbox.delivery.outcome': outcome,
    });
  }

  /** The message goes to the dead-letter topic instead. */
  deadLettered(message: KafkaMessage, reason: string, detail: string): void {
    const span = this.spans.get(message);
    span?.setAttribute('outbox.dead_letter.reason', reason);
    span?.setStatus({ code: SpanStatusCode.ERROR, message: `dead-lettered: ${detail}` });
  }

  /** The chunk failed as a whole (e.g. a transient database error): Kafka redelivers it. */
  failed(error: unknown): void {
    for (const span of this.spans.values()) {
      if (error instanceof Error) span.recordException(error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
    }
    this.end();
  }

  end(): void {
    for (const span of this.spans.values()) span.end();
    this.spans.clear();
  }
}

/**
 * Runs a message's effect inside its own span (`inventory.reserve` for OrderCreated,
 * `inventory.release` for OrderCancelled), a child of the message's span; its statement's
 * pg span nests under it. Events with no effect on stock get no span.
 */
export async function inEffectSpan<T>(
  name: string | undefined,
  parent: Context | undefined,
  attributes: Record<string, string>,
  fn: () => Promise<T>,
): Promise<T> {
  if (!name) return fn();
  const span = tracer.startSpan(name, { attributes }, parent ?? context.active());
  try {
    const result = await context.with(trace.setSpan(parent ?? context.active(), span), fn);
    span.end();
    return result;
  } catch (error) {
    if (error instanceof Error) span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
    span.end();
    throw error;
  }
}
