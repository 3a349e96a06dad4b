import type { OutboxRowView, OutboxStatus } from '@outbox/dashboard-api/contract';
import { useState } from 'react';
import { useOutboxPage, useRequeue } from '../api/queries.ts';
import { formatClock, shortId } from '../format.ts';

const TABS: { status: OutboxStatus | undefined; label: string }[] = [
  { status: undefined, label: 'All' },
  { status: 'pending', label: 'Pending' },
  { status: 'failed', label: 'Failing' },
  { status: 'dead', label: 'Dead-lettered' },
  { status: 'sent', label: 'Sent' },
];

function RequeueButton(props: { row: OutboxRowView; onRequeued: (id: string) => void }) {
  const { row } = props;
  const requeue = useRequeue();
  if (requeue.isSuccess) return <span className="ok-text">requeued</span>;
  return (
    <>
      <button
        type="button"
        className="btn btn-small"
        disabled={requeue.isPending}
        onClick={() => requeue.mutate(row.id, { onSuccess: () => props.onRequeued(row.id) })}
        aria-label={`Requeue outbox row ${row.id}`}
      >
        Requeue
      </button>
      {requeue.error ? <span className="error">{requeue.error.message}</span> : null}
    </>
  );
}

/** The outbox table itself: what is pending, failing, dead-lettered, sent; requeue a dead row. */
export function OutboxBrowser({ onOrder }: { onOrder: (orderId: string) => void }) {
  const [status, setStatus] = useState<OutboxStatus | undefined>(undefined);
  const [aggregateId, setAggregateId] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const [requeued, setRequeued] = useState<string | null>(null);
  const cursor = cursors.at(-1);
  const page = useOutboxPage({
    status,
    aggregateId: aggregateId.trim() || undefined,
    cursor,
  });
  const rows = page.data?.rows ?? [];
  return (
    <>
      <div className="outbox-tools">
        <div className="tabs" role="group" aria-label="Outbox status">
          {TABS.map((t) => (
            <button
              key={t.label}
              type="button"
              className={`btn btn-small ${status === t.status ? 'btn-on' : 'btn-ghost'}`}
              aria-pressed={status === t.status}
              onClick={() => {
                setStatus(t.status);
                setCursors([]);
              }}
            >
              {t.label}
            </button>
          ))}
        </div>
        <label className="search">
          <span>aggregate_id</span>
          <input
            type="search"
            value={aggregateId}
            placeholder="an order id"
            onChange={(e) => {
              setAggregateId(e.target.value);
              setCursors([]);
            }}
          />
        </label>
      </div>
      {page.error ? (
        <p className="error" role="alert">
          {page.error.message}
        </p>
      ) : null}
      {requeued ? (
        <p className="notice" role="status" data-testid="requeue-notice">
          Row {requeued} requeued: attempts reset, the relay publishes it on its next pass.
        </p>
      ) : null}
      <div className="table-wrap">
        <table className="outbox" data-testid="outbox-table">
          <thead>
            <tr>
              <th scope="col">id</th>
              <th scope="col">aggregate</th>
              <th scope="col">event</th>
              <th scope="col">status</th>
              <th scope="col">attempts</th>
              <th scope="col">error</th>
              <th scope="col">created</th>
              <th scope="col">sent</th>
              <th scope="col">shard</th>
              <th scope="col">
                <span className="sr-only">actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.length === 0 ? (
              <tr>
                <td colSpan={10} className="muted">
                  {page.isLoading ? 'Loading…' : 'No row here.'}
                </td>
              </tr>
            ) : (
              rows.map((r) => (
                <tr key={r.id} data-testid={`outbox-row-${r.id}`} className={`status-${r.status}`}>
                  <td className="num">{r.id}</td>
                  <td>
                    <span className="muted">{r.aggregateType}</span>{' '}
                    {r.aggregateType === 'order' ? (
                      <button
                        type="button"
                        className="link"
                        title={`Show the journey of order ${r.aggregateId}`}
                        onClick={() => onOrder(r.aggregateId)}
                      >
                        {shortId(r.aggregateId)}
                      </button>
                    ) : (
                      shortId(r.aggregateId)
                    )}
                  </td>
                  <td>
                    {r.eventType} <span className="muted">v{r.eventVersion}</span>
                  </td>
                  <td>
                    <span className={`badge badge-status-${r.status}`}>{r.status}</span>
                  </td>
                  <td className="num">{r.attempts}</td>
                  <td className="error-cell" title={r.error ?? undefined}>
                    {r.error ?? ''}
                  </td>
                  <td>{formatClock(r.createdAt)}</td>
                  <td>
                    {r.sentAt ? formatClock(r.sentAt) : '—'}
                    {r.kafkaOffset != null ? (
                      <span
                        className="muted sent-at"
                        title={`The broker acknowledged it at ${r.topic ?? 'its topic'}, partition ${r.kafkaPartition}, offset ${r.kafkaOffset}`}
                      >
                        {' '}
                        p{r.kafkaPartition}@{r.kafkaOffset}
                      </span>
                    ) : null}
                  </td>
                  <td className="num">{r.shard}</td>
                  <td>
                    {r.status === 'dead' || r.status === 'failed' ? (
                      <RequeueButton row={r} onRequeued={setRequeued} />
                    ) : null}
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
      <div className="pager">
        <button
          type="button"
          className="btn btn-small btn-ghost"
          disabled={cursors.length === 0}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          ← Newer
        </button>
        <span className="muted">{cursor ? `rows before id ${cursor}` : 'newest rows, live'}</span>
        <button
          type="button"
          className="btn btn-small btn-ghost"
          disabled={!page.data?.nextCursor}
          onClick={() => page.data?.nextCursor && setCursors([...cursors, page.data.nextCursor])}
        >
          Older →
        </button>
      </div>
    </>
  );
}
