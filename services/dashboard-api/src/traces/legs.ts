import type { SpanRecord } from '@outbox/lab';

/**
 * The legs of one event's way, read off its trace (span names and parents as
 * docs/tracing.md lists them):
 * - commit: the POST /orders server span, request to response (the COMMIT is inside);
 * - outbox: from that response to the relay's publish span: the row waiting to be claimed;
 * - produce: the publish span, send to the broker's ack (acks = all);
 * - consume: from the send to the consumer's process span of the message. Not from the
 *   ack: the broker serves the consumer's fetch as soon as the batch is written (and
 *   replicated), so the consumer often starts before the ack's response has reached the
 *   relay; the two legs overlap then, which the waterfall shows as it is;
 * - reservation: that process span's start to the end of its effect on the stock
 *   (inventory.reserve, or inventory.release for a cancellation; the span's own end
 *   for a message whose effect did not run).
 * A leg whose ends are not in the trace (yet) is null.
 */
export const LEGS = ['commit', 'outbox', 'produce', 'consume', 'reservation'] as const;
export type LegName = (typeof LEGS)[number];

export interface Leg {
  leg: LegName;
  /** Epoch ms of the leg's start and end, and its length. */
  fromMs: number;
  toMs: number;
  ms: number;
}

export interface EventTrace {
  traceId: string;
  spans: number;
  services: string[];
  legs: (Leg | null)[];
  /** Every time the consumer handled the event: the first applied it, later ones are duplicates. */
  deliveries: { service: string; atMs: number; duplicate: boolean | undefined }[];
}

const INBOX_DUPLICATE = 'outbox.inbox.duplicate';
const EVENT_ID = 'outbox.event_id';

const byStart = (a: SpanRecord, b: SpanRecord) => a.startMs - b.startMs;

function leg(name: LegName, from: number | undefined, to: number | undefined): Leg | null {
  if (from === undefined || to === undefined) return null;
  return { leg: name, fromMs: from, toMs: to, ms: Math.max(0, to - from) };
}

/** The journey legs of `eventId` in its trace's spans. */
export function eventLegs(
  traceId: string,
  trace: { spans: readonly SpanRecord[]; total: number; services: ReadonlySet<string> },
  eventId: string,
): EventTrace {
  const { spans } = trace;
  const children = new Map<string, SpanRecord[]>();
  for (const s of spans)
    if (s.parentSpanId) children.set(s.parentSpanId, [...(children.get(s.parentSpanId) ?? []), s]);
  const descendants = (root: SpanRecord): SpanRecord[] => {
    const out: SpanRecord[] = [];
    const todo = [...(children.get(root.spanId) ?? [])];
    for (let s = todo.pop(); s; s = todo.pop()) {
      out.push(s);
      todo.push(...(children.get(s.spanId) ?? []));
    }
    return out;
  };

  const request = spans.filter((s) => s.kind === 'server').sort(byStart)[0];
  // A trace holds one request; it may append several events: keep this event's sends
  // (several when the relay sent it again, e.g. after "kill mid-publish").
  const producers = spans.filter((s) => s.kind === 'producer');
  const mine = producers.filter((s) => s.attributes[EVENT_ID] === eventId);
  const publishes = (mine.length > 0 ? mine : producers).sort(byStart);
  const acked = publishes.find((s) => s.statusCode !== 2) ?? publishes[0];
  const publishIds = new Set(publishes.map((s) => s.spanId));
  // A handling of this event: below one of its sends, or naming it (the consumer sets
  // the event id): a worker killed mid-publish may never have exported its send's span.
  const consumes = spans
    .filter(
      (s) =>
        s.kind === 'consumer' &&
        ((s.parentSpanId && publishIds.has(s.parentSpanId)) || s.attributes[EVENT_ID] === eventId),
    )
    .sort(byStart);
  const first = consumes[0];
  const below = first ? descendants(first) : [];
  const effect = below.find((s) => s.name.startsWith('inventory.'));

  return {
    traceId,
    spans: trace.total,
    services: [...trace.services].sort(),
    legs: [
      leg('commit', request?.startMs, request?.endMs),
      leg('outbox', request?.endMs, publishes[0]?.startMs),
      leg('produce', acked?.startMs, acked?.endMs),
      leg('consume', acked?.startMs, first?.startMs),
      leg('reservation', first?.startMs, first ? (effect ?? first).endMs : undefined),
    ],
    deliveries: consumes.map((c) => {
      const flag = descendants(c).find((s) => INBOX_DUPLICATE in s.attributes)?.attributes[
        INBOX_DUPLICATE
      ];
      return {
        service: c.service,
        atMs: c.startMs,
        duplicate: typeof flag === 'boolean' ? flag : undefined,
      };
    }),
  };
}
