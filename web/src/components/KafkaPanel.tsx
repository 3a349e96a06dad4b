import type {
  FailurePointState,
  KafkaView,
  OrderMode,
  RelayAcks,
  RelayKind,
} from '@outbox/dashboard-api/contract';
import { useEffect, useState } from 'react';
import { useSetAcks } from '../api/queries.ts';
import { formatAgo, formatClock, formatRate } from '../format.ts';
import {
  ACKS_TEXT,
  CLUSTER_COMMAND,
  brokerCount,
  clusterSummary,
  partitionRows,
  type LeaderMoves,
  type ReplicaState,
} from '../live/kafka.ts';
import { useNow } from '../use-now.ts';
import { FailureCard, failurePointsOf } from './FailurePanel.tsx';

/** The newest broker actions shown (the server keeps 20). */
const ACTIONS_SHOWN = 6;

const REPLICA_TITLE: Record<ReplicaState, string> = {
  leader: 'leader',
  'in-sync': 'follower, in sync',
  'out-of-sync': 'follower, out of sync',
  down: 'broker down',
};

/**
 * The relay's producer acks, switched live. 'all' is the default and the only safe
 * setting; '1' is there for the lesson, marked unsafe, with what it risks.
 */
export function AcksSwitch({ acks, brokers }: { acks: RelayAcks | undefined; brokers: number }) {
  const setAcks = useSetAcks();
  // As the mode switch: the chosen segment shows at once, the setting follows.
  const [chosen, setChosen] = useState<RelayAcks | null>(null);
  useEffect(() => {
    if (chosen !== null && chosen === acks) setChosen(null);
  }, [chosen, acks]);
  const shown = chosen ?? acks;
  return (
    <fieldset className="mode acks" data-testid="acks-switch" data-acks={acks}>
      <legend>The relay&rsquo;s acks</legend>
      <div className="segmented">
        {(['all', '1'] as const).map((a) => (
          <label key={a} className={`segment segment-acks-${a} ${shown === a ? 'segment-on' : ''}`}>
            <input
              type="radio"
              name="relay-acks"
              value={a}
              checked={shown === a}
              disabled={setAcks.isPending}
              onChange={() => {
                setChosen(a);
                setAcks.mutate(a, { onError: () => setChosen(null) });
              }}
            />
            {a === 'all' ? (
              'all'
            ) : (
              <>
                1 <span className="unsafe-tag">UNSAFE</span>
              </>
            )}
          </label>
        ))}
      </div>
      <p
        className={`mode-how ${shown === '1' ? 'acks-unsafe' : ''}`}
        data-testid="acks-how"
        aria-live="polite"
      >
        {shown ? ACKS_TEXT[shown].how : 'Loading…'}
      </p>
      {brokers === 1 ? (
        <p className="mode-how muted">
          With one broker there is no follower to wait for: both settings behave alike.
        </p>
      ) : null}
      {setAcks.error ? (
        <p className="error" role="alert">
          {setAcks.error.message}
        </p>
      ) : null}
    </fieldset>
  );
}

/** orders.events on the brokers: leaders, replicas and ISR per partition, live. */
export function PartitionTable({ kafka, moves }: { kafka: KafkaView; moves: LeaderMoves }) {
  const now = useNow();
  const rows = partitionRows(kafka);
  if (rows.length === 0)
    return <p className="muted">The topic {kafka.topic} has no partitions yet.</p>;
  return (
    <div className="table-wrap">
      <table className="partitions" data-testid="kafka-partitions">
        <thead>
          <tr>
            <th scope="col">Partition</th>
            <th scope="col">Leader</th>
            <th scope="col">Replicas (in sync)</th>
            <th scope="col" className="num-head">
              msg/s
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const move = moves[r.partition];
            // A move is news for a minute; after that the table just says who leads.
            const recent = move && now - Date.parse(move.at) < 60_000 ? move : undefined;
            return (
              <tr
                key={r.partition}
                className={`partition partition-${r.health} ${r.busiest ? 'partition-busiest' : ''}`}
                data-testid={`kafka-partition-${r.partition}`}
                data-leader={r.leader ?? 'none'}
                data-health={r.health}
                data-busiest={r.busiest ? 'true' : undefined}
              >
                <th scope="row" className="num">
                  {r.partition}
                  {r.busiest ? (
                    <span
                      className="busiest"
                      title="The partition “Kill the partition leader” aims at"
                    >
                      busiest
                    </span>
                  ) : null}
                </th>
                <td data-testid={`kafka-partition-${r.partition}-leader`}>
                  {r.leader === null ? (
                    <span className="offline">none: offline</span>
                  ) : (
                    <b>broker {r.leader}</b>
                  )}
                  {recent ? (
                    <span className="moved" data-testid={`kafka-partition-${r.partition}-moved`}>
                      {recent.from === null ? 'elected' : `was broker ${recent.from}`} ·{' '}
                      {formatAgo(recent.at, now)}
                    </span>
                  ) : null}
                </td>
                <td>
                  <span className="replicas">
                    {r.replicas.map((rep) => (
                      <span
                        key={rep.id}
                        className={`replica replica-${rep.state}`}
                        title={`broker ${rep.id}: ${REPLICA_TITLE[rep.state]}`}
                        data-state={rep.state}
                      >
                        {rep.state === 'leader' ? <span aria-hidden="true">★ </span> : null}
                        {rep.id}
                        <span className="sr-only">: {REPLICA_TITLE[rep.state]}</span>
                      </span>
                    ))}
                  </span>
                  {r.health === 'offline' ? (
                    <span className="partition-note note-broken">
                      no leader: nobody can write it
                    </span>
                  ) : r.health === 'below-min-isr' ? (
                    <span className="partition-note note-broken">
                      {r.isr.length} in sync &lt; min.insync.replicas: acks = all writes refused
                    </span>
                  ) : r.health === 'under-replicated' ? (
                    <span className="partition-note note-warn">
                      {r.isr.length} of {r.replicas.length} in sync
                    </span>
                  ) : null}
                </td>
                <td className="num">{formatRate(r.messagesPerSecond)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The broker's half of the guarantee: which brokers are up, who leads each partition of
 * orders.events and who is in sync, the relay's acks, and the buttons that break it.
 * With one broker it says what the 3-broker demo would show, and the buttons wait for it.
 */
export function KafkaPanel(props: {
  kafka: KafkaView | undefined;
  moves: LeaderMoves;
  acks: RelayAcks | undefined;
  states: FailurePointState[] | undefined;
  mode: OrderMode | undefined;
  relay: RelayKind | undefined;
  chaosEnabled: boolean;
}) {
  const { kafka } = props;
  const brokers = brokerCount(kafka);
  const summary = clusterSummary(kafka);
  const byName = new Map(props.states?.map((s) => [s.name, s]));
  const leads = (id: number) => kafka?.partitions.filter((p) => p.leader === id).length ?? 0;
  return (
    <div className="kafka" data-testid="kafka-panel" data-brokers={brokers}>
      <div className="kafka-state">
        <p className="group-head">
          <span
            className={`group-state group-${summary.tone === 'broken' ? 'stalled' : summary.tone === 'warn' ? 'behind' : summary.tone}`}
            data-testid="kafka-health"
            data-tone={summary.tone}
          >
            {brokers === 1 ? '1 broker' : `${brokers} brokers`}
          </span>
          {kafka ? (
            <span className="group-meta">
              <code>{kafka.topic}</code> · replication factor{' '}
              <b>{kafka.replicationFactor ?? '?'}</b> · min.insync.replicas{' '}
              <b>{kafka.minInsyncReplicas ?? '?'}</b>
            </span>
          ) : null}
        </p>
        <p className="group-why" data-testid="kafka-summary">
          {summary.text}
        </p>
        {kafka && kafka.nodes.length > 0 ? (
          <ul className="brokers" aria-label="Brokers">
            {kafka.nodes.map((n) => (
              <li
                key={n.id}
                className={`broker ${n.up ? 'broker-up' : 'broker-down'}`}
                data-testid={`kafka-broker-${n.id}`}
                data-up={n.up ? 'true' : 'false'}
              >
                <span className={`dot ${n.up ? 'dot-up' : 'dot-down'}`} aria-hidden="true" />
                <b title={n.address}>broker {n.id}</b>
                <span className="broker-state">{n.up ? 'up' : 'down'}</span>
                <span className="broker-meta">leads {leads(n.id)}</span>
              </li>
            ))}
          </ul>
        ) : null}
        {kafka ? <PartitionTable kafka={kafka} moves={props.moves} /> : null}
        {kafka?.actions && kafka.actions.length > 0 ? (
          <div className="broker-actions">
            <h3>What the demo did to the brokers</h3>
            <ol data-testid="kafka-actions">
              {[...kafka.actions]
                .reverse()
                .slice(0, ACTIONS_SHOWN)
                .map((a, i) => (
                  <li key={`${a.at}-${i}`}>
                    <time dateTime={a.at}>{formatClock(a.at)}</time> {a.text}
                  </li>
                ))}
            </ol>
          </div>
        ) : null}
        {brokers === 1 ? (
          <p className="kafka-single" data-testid="kafka-needs-cluster">
            This demo runs <b>one broker</b>: every partition has a single copy, no follower to stop
            and no leader to elect. The broker&rsquo;s half of the guarantee (acks = all,
            min.insync.replicas = 2 on a replication factor of 3, no unclean leader election) needs
            three: start the demo with <code>{CLUSTER_COMMAND}</code>.
          </p>
        ) : null}
      </div>
      <div className="kafka-actions">
        <AcksSwitch acks={props.acks} brokers={brokers} />
        <ul className="failures" aria-label="Break the brokers">
          {failurePointsOf('cluster').map((info) => (
            <FailureCard
              key={info.name}
              info={byName.get(info.name) ?? info}
              state={byName.get(info.name)}
              mode={props.mode}
              relay={props.relay}
              kafka={kafka}
              disabled={!props.chaosEnabled}
              secondsField
            />
          ))}
        </ul>
      </div>
    </div>
  );
}
