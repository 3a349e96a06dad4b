import type { FeedEvent } from '@outbox/dashboard-api/contract';
import { useState } from 'react';
import { feedKey, feedTone, type FeedTone } from '../live/feed.ts';
import { formatClock, shortId } from '../format.ts';

const TONE_LABEL: Record<FeedTone, string> = {
  processed: 'processed',
  caught: 'duplicate · caught by the inbox',
  reprocessed: 'duplicate · applied again (inbox off)',
  fifo: 'out of order',
  dead: 'dead-lettered',
};

/** The inbox's mark on a caught duplicate (an SVG: no emoji font is needed). */
function Shield() {
  return (
    <svg className="shield" viewBox="0 0 16 16" width="12" height="12" aria-hidden="true">
      <path d="M8 1 2 3.5V8c0 3.2 2.6 6 6 7 3.4-1 6-3.8 6-7V3.5z" fill="currentColor" />
      <path d="m5 8 2 2 4-4" fill="none" stroke="#15803d" strokeWidth="1.8" />
    </svg>
  );
}

function FeedLine({ e, onOrder }: { e: FeedEvent; onOrder: (id: string) => void }) {
  const tone = feedTone(e);
  return (
    <li className={`feed-line feed-${tone}`} data-testid="feed-line" data-tone={tone}>
      <time className="feed-time">{formatClock(e.at)}</time>
      {e.kind === 'delivery' ? (
        <>
          <span className="feed-type">
            {e.eventType}
            {e.seq !== null ? <span className="feed-seq"> #{e.seq}</span> : null}
          </span>
          <button
            type="button"
            className="link feed-order"
            title={`Show the journey of order ${e.aggregateId}`}
            onClick={() => onOrder(e.aggregateId)}
          >
            {shortId(e.aggregateId)}
          </button>
          <span className="feed-where">
            p{e.partition}@{e.offset}
          </span>
        </>
      ) : (
        <span className="feed-type feed-reason">{e.reason}</span>
      )}
      <span className={`badge badge-${tone}`}>
        {tone === 'caught' ? <Shield /> : null}
        {TONE_LABEL[tone]}
        {e.kind === 'delivery' && e.fifoViolation && tone !== 'fifo' ? ' · out of order' : null}
      </span>
    </li>
  );
}

/** What the consumer saw, newest first; a duplicate the inbox caught stands out. */
export function EventFeed(props: {
  feed: readonly FeedEvent[];
  anomalies: readonly FeedEvent[];
  onOrder: (orderId: string) => void;
}) {
  const [onlyAnomalies, setOnlyAnomalies] = useState(false);
  const [paused, setPaused] = useState<{
    feed: readonly FeedEvent[];
    anomalies: readonly FeedEvent[];
  } | null>(null);
  const source = paused ?? props;
  const lines = onlyAnomalies ? source.anomalies : source.feed;
  return (
    <>
      <div className="feed-tools">
        <label className="check">
          <input
            type="checkbox"
            checked={onlyAnomalies}
            onChange={(e) => setOnlyAnomalies(e.target.checked)}
          />
          Only duplicates and anomalies
        </label>
        <button
          type="button"
          className="btn btn-small btn-ghost"
          aria-pressed={paused !== null}
          onClick={() =>
            setPaused(paused ? null : { feed: props.feed, anomalies: props.anomalies })
          }
        >
          {paused ? 'Resume' : 'Pause'}
        </button>
      </div>
      {lines.length === 0 ? (
        <p className="muted">
          {onlyAnomalies ? 'No duplicate or anomaly yet.' : 'No delivery yet: start some traffic.'}
        </p>
      ) : (
        <ol className="feed" aria-label="Deliveries, newest first" data-testid="event-feed">
          {lines.slice(0, 80).map((e) => (
            <FeedLine key={feedKey(e)} e={e} onOrder={props.onOrder} />
          ))}
        </ol>
      )}
    </>
  );
}
