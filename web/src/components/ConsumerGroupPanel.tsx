import type { ConsumerGroup, ConsumerGroupState } from '@outbox/dashboard-api/contract';
import { formatAgo, formatCount } from '../format.ts';
import { useNow } from '../use-now.ts';

const STATE: Record<ConsumerGroupState, { label: string; tone: string }> = {
  unknown: { label: 'unknown', tone: 'unknown' },
  caught_up: { label: 'caught up', tone: 'ok' },
  behind: { label: 'behind, moving', tone: 'behind' },
  stalled: { label: 'stalled', tone: 'stalled' },
};

/**
 * inventory-consumer's group as Kafka sees it: per partition, where the group will read
 * next against where the topic ends. Lag that does not shrink is a stalled consumer:
 * its events wait on the topic (published, not consumed), they are not lost.
 */
export function ConsumerGroupPanel({ group }: { group: ConsumerGroup | undefined }) {
  const now = useNow();
  if (!group) return <p className="muted">No consumer group reported yet.</p>;
  const state = STATE[group.state];
  const widest = Math.max(1, ...group.partitions.map((p) => p.lag));
  return (
    <div className="group" data-testid="consumer-group">
      <p className="group-head">
        <span
          className={`group-state group-${state.tone}`}
          data-testid="consumer-state"
          data-state={group.state}
        >
          {state.label}
        </span>
        <span className="group-meta">
          lag <b data-testid="consumer-lag">{formatCount(group.lag)}</b>
          {' · '}
          {group.members === null
            ? 'members ?'
            : `${group.members} member${group.members === 1 ? '' : 's'}`}
        </span>
      </p>
      <p className="group-why">
        {group.state === 'stalled'
          ? `Its committed offsets last moved ${formatAgo(group.movedAt, now)}, with ${formatCount(group.lag)} events waiting: the consumer is not consuming.`
          : group.state === 'behind'
            ? 'Events wait on the topic and the group is reading them.'
            : group.state === 'caught_up'
              ? 'The group has read everything on the topic.'
              : group.error
                ? `Kafka could not be read: ${group.error}`
                : 'Not read from Kafka yet.'}
      </p>
      {group.partitions.length > 0 ? (
        <div className="table-wrap">
          <table className="lag" data-testid="consumer-partitions">
            <thead>
              <tr>
                <th scope="col">Partition</th>
                <th scope="col">Committed</th>
                <th scope="col">End</th>
                <th scope="col">Lag</th>
              </tr>
            </thead>
            <tbody>
              {group.partitions.map((p) => (
                <tr key={p.partition} data-testid={`consumer-partition-${p.partition}`}>
                  <th scope="row" className="num">
                    {p.partition}
                  </th>
                  <td className="num">{p.committed ?? '—'}</td>
                  <td className="num">{p.highWatermark}</td>
                  <td className="num lag-cell">
                    <span
                      className={`lag-bar ${p.lag > 0 ? `lag-${state.tone}` : ''}`}
                      style={{ width: `${(p.lag / widest) * 100}%` }}
                      aria-hidden="true"
                    />
                    <span data-testid={`consumer-partition-${p.partition}-lag`}>
                      {formatCount(p.lag)}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="muted">The topic {group.topic} has no partitions yet.</p>
      )}
      <p className="group-foot muted">
        {group.groupId} on {group.topic} · stalled after {group.stallAfterSeconds} s without
        progress
      </p>
    </div>
  );
}
