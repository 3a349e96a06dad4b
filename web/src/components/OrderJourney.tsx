import type { Journey } from '@outbox/dashboard-api/contract';
import { useEffect, useState } from 'react';
import { isUuid, useJourney } from '../api/queries.ts';
import { formatClock, shortId } from '../format.ts';
import { TraceLegs } from './TraceLegs.tsx';

const STEP_LABEL: Record<Journey['steps'][number]['step'], string> = {
  order: 'orders row',
  outbox: 'outbox row',
  kafka: 'Kafka offset',
  inbox: 'inbox row',
  reservation: 'reservation',
};

function Steps({ journey }: { journey: Journey }) {
  return (
    <ol className="steps" aria-label="Journey of the order">
      {journey.steps.map((s) => (
        <li key={s.step} className={`step ${s.done ? 'step-done' : 'step-missing'}`}>
          <span className="step-mark" aria-hidden="true">
            {s.done ? '✓' : '·'}
          </span>
          <span className="step-name">{STEP_LABEL[s.step]}</span>
          <span className="step-detail">{s.detail}</span>
          <span className="step-at">
            {s.at ? formatClock(s.at) : s.done ? '' : 'not yet / never'}
          </span>
        </li>
      ))}
    </ol>
  );
}

/** One order's way: orders row → outbox row → Kafka offset → inbox row → reservation. */
export function OrderJourney({
  orderId,
  onOrder,
}: {
  orderId: string | null;
  onOrder: (id: string) => void;
}) {
  const [draft, setDraft] = useState(orderId ?? '');
  useEffect(() => setDraft(orderId ?? ''), [orderId]);
  const journey = useJourney(orderId);
  const data = journey.data;
  const reservations = data?.reservations.filter((r) => !r.releasedAt).length ?? 0;
  return (
    <>
      <form
        className="journey-form"
        onSubmit={(e) => {
          e.preventDefault();
          onOrder(draft.trim());
        }}
      >
        <label>
          <span>Order id</span>
          <input
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            placeholder="click an order in the feed, or paste its id"
            spellCheck={false}
          />
        </label>
        <button type="submit" className="btn btn-small" disabled={!isUuid(draft.trim())}>
          Show
        </button>
      </form>
      {orderId && !isUuid(orderId) ? <p className="error">Not an order id (a UUID).</p> : null}
      {journey.error ? (
        <p className="error" role="alert">
          {journey.error.message}
        </p>
      ) : null}
      {!orderId ? (
        <p className="muted">
          Pick an order to follow its event from the INSERT to the stock reservation.
        </p>
      ) : null}
      {data ? (
        <div className="journey" data-testid="journey">
          <p className="journey-head">
            Order <code>{shortId(data.orderId)}</code>
            {data.order ? (
              <>
                {' '}
                · {data.order.sku} ×{data.order.quantity} · {data.order.status} ·{' '}
                <span className={`badge badge-mode-${data.order.mode}`}>{data.order.mode}</span>
              </>
            ) : (
              <span className="error"> · no such order in PostgreSQL (a phantom?)</span>
            )}
          </p>
          <Steps journey={data} />
          <TraceLegs journey={data} />
          {data.deliveries.length > 0 ? (
            <ul className="journey-deliveries">
              {data.deliveries.map((d) => (
                <li
                  key={d.id}
                  className={`feed-line feed-${d.outcome === 'duplicate' ? 'caught' : d.outcome}`}
                >
                  <span>
                    {d.eventType}
                    {d.seq !== null ? ` #${d.seq}` : ''}
                  </span>
                  <span className="feed-where">
                    p{d.partition}@{d.offset}
                  </span>
                  <span
                    className={`badge badge-${d.outcome === 'duplicate' ? 'caught' : d.outcome}`}
                  >
                    {d.outcome === 'duplicate' ? 'caught by the inbox' : d.outcome}
                  </span>
                </li>
              ))}
            </ul>
          ) : null}
          {reservations > 1 ? (
            <p className="error">
              Stock reserved {reservations} times for this order: double-processed.
            </p>
          ) : null}
        </div>
      ) : null}
    </>
  );
}
