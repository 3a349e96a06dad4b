import type { SpanRecord } from '@outbox/lab';

/** A trace as held: the spans the journey reads, and what came of the whole trace. */
export interface HeldTrace {
  spans: SpanRecord[];
  /** Every span received for the trace, kept or not. */
  total: number;
  services: Set<string>;
}

/**
 * The spans the journey's legs are read from (legs.ts): the request, the sends, the
 * handlings and what the consumer did. Database and framework spans are counted and
 * dropped: they are ~2/3 of a trace, and keeping them would shorten the window.
 */
function journeySpan(span: SpanRecord): boolean {
  return (
    span.kind === 'server' ||
    span.kind === 'producer' ||
    span.kind === 'consumer' ||
    span.name === 'inbox.check' ||
    span.name.startsWith('inventory.')
  );
}

/**
 * The spans the dashboard has received, by trace, in memory and bounded: when more
 * than `maxSpans` are held, the traces first seen longest ago go first. This is a
 * window for the order journey of recent orders (at 20 orders/s, ~10 minutes with the
 * default), not a trace store: point OTEL_EXPORTER_OTLP_ENDPOINT at a collector for that
 * (docs/tracing.md).
 */
export class SpanStore {
  private readonly traces = new Map<string, HeldTrace>();
  private held = 0;
  private total = 0;
  private evicted = 0;
  private last: number | undefined;

  constructor(private readonly maxSpans = 50_000) {}

  add(spans: SpanRecord[], now = Date.now()): void {
    if (spans.length === 0) return;
    for (const span of spans) {
      let trace = this.traces.get(span.traceId);
      if (!trace) {
        trace = { spans: [], total: 0, services: new Set() };
        this.traces.set(span.traceId, trace);
      }
      trace.total += 1;
      trace.services.add(span.service);
      if (journeySpan(span)) {
        trace.spans.push(span);
        this.held += 1;
      }
    }
    this.total += spans.length;
    this.last = now;
    for (const [id, trace] of this.traces) {
      if (this.held <= this.maxSpans) break;
      this.traces.delete(id);
      this.held -= trace.spans.length;
      this.evicted += 1;
    }
  }

  /** One trace as held, or undefined when none of its spans arrived or it was evicted. */
  trace(traceId: string): HeldTrace | undefined {
    return this.traces.get(traceId);
  }

  /** What has arrived so far: whether tracing reaches this dashboard at all, and the window. */
  get status(): {
    spansReceived: number;
    spansHeld: number;
    tracesEvicted: number;
    lastReceivedAt: number | undefined;
  } {
    return {
      spansReceived: this.total,
      spansHeld: this.held,
      tracesEvicted: this.evicted,
      lastReceivedAt: this.last,
    };
  }
}
