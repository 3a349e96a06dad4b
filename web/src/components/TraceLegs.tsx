import type { Journey } from '@outbox/dashboard-api/contract';
import { formatCount, formatMs, shortId } from '../format.ts';

type EventTrace = Journey['traces'][number];
type LegName = NonNullable<EventTrace['legs'][number]>['leg'];

/** What each leg covers, in the words of the seed's flow. */
const LEG_LABEL: Record<LegName, { name: string; title: string }> = {
  commit: { name: 'commit', title: 'POST /orders: the order and its outbox row, COMMIT, response' },
  outbox: {
    name: 'in the outbox',
    title: 'from the COMMIT until the relay claimed and sent the row',
  },
  produce: { name: 'produce', title: "the relay's send until the broker's ack (acks = all)" },
  consume: {
    name: 'to the consumer',
    title:
      "from the relay's send until the consumer took the message (it may come before the relay has its ack)",
  },
  reservation: {
    name: 'reservation',
    title: 'inbox check, stock reservation and COMMIT in the consumer',
  },
};
const LEG_ORDER: LegName[] = ['commit', 'outbox', 'produce', 'consume', 'reservation'];

/**
 * One event's trace as a waterfall: each leg a bar on a common time axis, with its
 * length. The times are the spans' own (every service on one clock here).
 */
function Waterfall({ trace }: { trace: EventTrace }) {
  const legs = trace.legs.filter((l) => l !== null);
  const start = Math.min(...legs.map((l) => Date.parse(l.from)));
  const end = Math.max(...legs.map((l) => Date.parse(l.from) + l.ms));
  const total = Math.max(end - start, 0.001);
  const duplicates = trace.deliveries.filter((d) => d.duplicate === true).length;
  return (
    <div className="trace" data-testid="trace">
      <p className="trace-head">
        {trace.eventType} <span className="muted">· event #{trace.eventId}</span>{' '}
        <span className="muted">
          · trace <code title={trace.traceId}>{shortId(trace.traceId)}</code> · {trace.spans} spans
          from {trace.services.join(', ')}
        </span>
      </p>
      <ol className="legs" aria-label={`Legs of event ${trace.eventId}`}>
        {LEG_ORDER.map((name, i) => {
          const leg = trace.legs[i];
          const label = LEG_LABEL[name];
          return (
            <li key={name} className={`leg leg-${name}`} title={label.title}>
              <span className="leg-name">{label.name}</span>
              <span className="leg-track">
                {leg ? (
                  <span
                    className="leg-bar"
                    style={{
                      left: `${((Date.parse(leg.from) - start) / total) * 100}%`,
                      width: `max(2px, ${(leg.ms / total) * 100}%)`,
                    }}
                  />
                ) : null}
              </span>
              <span className="leg-ms" data-testid={`leg-${name}`}>
                {leg ? formatMs(leg.ms) : 'not in the trace yet'}
              </span>
            </li>
          );
        })}
      </ol>
      {duplicates > 0 ? (
        <p className="trace-note">
          Delivered {trace.deliveries.length} times: {duplicates} caught by the inbox (their{' '}
          <code>inbox.check</code> spans say duplicate).
        </p>
      ) : null}
    </div>
  );
}

/** The order's events' traces, or why there are none. */
export function TraceLegs({ journey }: { journey: Journey }) {
  if (journey.traces.length > 0)
    return (
      <section className="traces" aria-label="Timings from the trace">
        {journey.traces.map((t) => (
          <Waterfall key={t.eventId} trace={t} />
        ))}
      </section>
    );
  if (journey.tracing.spansReceived === 0)
    return (
      <p className="muted trace-off">
        Tracing is off: start the demo with <code>--tracing</code> to see each leg&apos;s time
        (commit → produce → consume → reservation).
      </p>
    );
  if (journey.outbox.length === 0) return null;
  const evicted = journey.tracing.tracesEvicted;
  return (
    <p className="muted trace-off">
      No trace of this order&apos;s events is held by the dashboard
      {evicted > 0
        ? `: it keeps the most recent traces only (${formatCount(evicted)} older ones dropped so far).`
        : ': it may still be on its way, or the events were written without tracing.'}
    </p>
  );
}
