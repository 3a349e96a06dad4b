import type { ProcessStatus } from '@outbox/dashboard-api/contract';
import { formatAgo } from '../format.ts';
import { useNow } from '../use-now.ts';

/** The demo's processes as the supervisor sees them: a kill shows as a restart here. */
export function ProcessList({ processes }: { processes: ProcessStatus[] | undefined }) {
  const now = useNow();
  if (!processes?.length) return <p className="muted">No process reported yet.</p>;
  return (
    <ul className="processes">
      {processes.map((p) => {
        const replica = p.replicas[0];
        return (
          <li
            key={p.name}
            className={`process process-${p.state}`}
            data-testid={`process-${p.name}`}
          >
            <span className={`dot dot-${p.state}`} aria-hidden="true" />
            <span className="process-name">{p.name}</span>
            <span className="process-state">{p.state}</span>
            <span className="process-restarts">
              restarts{' '}
              <b
                data-testid={`process-${p.name}-restarts`}
                className={p.restarts > 0 ? 'warm' : ''}
              >
                {p.restarts}
              </b>
            </span>
            <span className="process-meta">
              {p.state === 'up' ? `up since ${formatAgo(p.startedAt, now)}` : `pid ${p.pid ?? '—'}`}
              {replica
                ? ` · ${replica.sharded ? `${replica.shards.length} shards` : 'unsharded'}${replica.sleeping ? ' · idle' : ''}`
                : ''}
            </span>
          </li>
        );
      })}
    </ul>
  );
}
