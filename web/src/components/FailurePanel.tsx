import {
  type FailurePointInfo,
  type FailurePointState,
  type KafkaView,
  type OrderMode,
  type RelayKind,
} from '@outbox/dashboard-api/contract';
import { useState } from 'react';
import { useArm } from '../api/queries.ts';
import { FAILURE_EXTRAS, FAILURE_POINTS } from '@outbox/dashboard-api/teaching';
import { armRequestWith, labelWithoutSeconds, notNow, secondsFrom } from '../live/applies.ts';
import { CLUSTER_COMMAND } from '../live/kafka.ts';
import { useNow } from '../use-now.ts';

function stateText(info: FailurePointInfo, state: FailurePointState | undefined, now: number) {
  if (!state) return null;
  if (info.kind === 'window' && state.active && state.activeUntil) {
    const left = Math.max(0, Math.ceil((Date.parse(state.activeUntil) - now) / 1000));
    return `${info.appliesTo === 'cluster' ? 'stopped' : 'outage'}: ${left} s left`;
  }
  // A switch shows its state inside the button (ON); a pill would say it twice.
  if (info.kind === 'switch') return null;
  if (state.active) return state.remaining > 1 ? `armed ×${state.remaining}` : 'armed: next one';
  return state.fired > 0 ? `fired ${state.fired}×` : null;
}

/**
 * One failure point: its button, what it does, what to watch, the shell equivalent. A
 * window with `secondsField` takes its length from a field beside the button (the
 * broker points: "Stop a follower … s") instead of the point's default.
 */
export function FailureCard(props: {
  info: FailurePointInfo;
  state: FailurePointState | undefined;
  mode: OrderMode | undefined;
  relay: RelayKind | undefined;
  kafka: KafkaView | undefined;
  disabled: boolean;
  secondsField?: boolean;
}) {
  const { info, state } = props;
  const arm = useArm();
  const now = useNow();
  const active = state?.active ?? false;
  const extras = FAILURE_EXTRAS[info.name] as (typeof FAILURE_EXTRAS)[typeof info.name] | undefined;
  const why = notNow(info, props);
  const withSeconds = props.secondsField === true && info.kind === 'window';
  const [secondsText, setSecondsText] = useState(String(extras?.seconds ?? 10));
  const seconds = secondsFrom(secondsText);
  const status = stateText(info, state, now);
  const descId = `fp-${info.name.replaceAll('.', '-')}-desc`;
  const secondsId = `fp-${info.name.replaceAll('.', '-')}-seconds`;
  const blocked = why?.kind === 'cluster';
  const request = armRequestWith(info, active, withSeconds ? seconds : undefined);
  return (
    <li
      className={`failure ${active ? 'failure-active' : ''} ${blocked ? 'failure-blocked' : ''}`}
      data-testid={`failure-${info.name}`}
    >
      <div className="failure-head">
        <button
          type="button"
          className={`btn btn-failure ${info.kind === 'switch' ? 'btn-switch' : ''}`}
          aria-pressed={info.kind === 'shot' ? undefined : active}
          aria-describedby={descId}
          disabled={
            props.disabled || blocked || arm.isPending || (withSeconds && !active && !seconds)
          }
          onClick={() => arm.mutate({ name: info.name, request })}
        >
          {withSeconds ? labelWithoutSeconds(info.label) : info.label}
          {info.kind !== 'shot' && active ? <span className="btn-state">ON</span> : null}
        </button>
        {withSeconds && !active ? (
          <label className="failure-seconds" htmlFor={secondsId}>
            for
            <input
              id={secondsId}
              type="number"
              min={1}
              max={600}
              step={1}
              inputMode="numeric"
              value={secondsText}
              disabled={props.disabled || blocked}
              aria-invalid={seconds === null}
              onChange={(e) => setSecondsText(e.target.value)}
            />
            s
          </label>
        ) : null}
        {status ? (
          <span
            className={`pill ${active ? 'pill-hot' : ''}`}
            data-testid={`failure-${info.name}-status`}
          >
            {status}
          </span>
        ) : null}
      </div>
      <p id={descId} className="failure-what">
        {info.description}
      </p>
      <p className="failure-watch">
        {/^watch\s/i.test(info.watch) ? (
          <>
            <b>Watch</b> {info.watch.slice(6)}
          </>
        ) : (
          info.watch
        )}
      </p>
      {why?.kind === 'cluster' ? (
        <p className="failure-mode" data-testid={`failure-${info.name}-needs`}>
          Needs <b>3 brokers</b> (this demo runs {why.brokers}): start it with{' '}
          <code>{CLUSTER_COMMAND}</code>.
        </p>
      ) : why?.kind === 'cdc' ? (
        <p className="failure-mode">
          Happens while <b>Debezium CDC</b> publishes only: switch the relay above.
        </p>
      ) : why?.kind === 'mode' ? (
        <p className="failure-mode">
          Happens in <b>{why.needs === 'naive' ? 'naive dual-write' : 'outbox'}</b> mode only:
          switch the mode above.
        </p>
      ) : null}
      {info.kind !== 'shot' && active ? (
        <p className="failure-mode">Click again to switch it off.</p>
      ) : null}
      {arm.error ? (
        <p className="error" role="alert">
          {arm.error.message}
        </p>
      ) : null}
      {extras ? (
        <code className="cli" title="The same from a shell">
          {withSeconds && seconds !== null
            ? extras.cli.replace(/--seconds \d+/, `--seconds ${seconds}`)
            : extras.cli}
        </code>
      ) : null}
    </li>
  );
}

/** The failure points of one group: the broker's ('cluster') or every other. */
export const failurePointsOf = (group: 'cluster' | 'services'): readonly FailurePointInfo[] =>
  FAILURE_POINTS.filter((p) => (p.appliesTo === 'cluster') === (group === 'cluster'));

/**
 * One button per failure point, in the seed's language: what happens, why, what to
 * watch. The broker's points ('cluster') live in the Kafka panel, beside the partitions
 * they break; this panel points there.
 */
export function FailurePanel(props: {
  states: FailurePointState[] | undefined;
  mode: OrderMode | undefined;
  relay: RelayKind | undefined;
  kafka: KafkaView | undefined;
  chaosEnabled: boolean;
}) {
  const byName = new Map(props.states?.map((s) => [s.name, s]));
  return (
    <>
      {!props.chaosEnabled ? (
        <p className="error">Failure points are disabled on this server (CHAOS_ENABLED=false).</p>
      ) : null}
      <ul className="failures">
        {failurePointsOf('services').map((info) => (
          <FailureCard
            key={info.name}
            info={byName.get(info.name) ?? info}
            state={byName.get(info.name)}
            mode={props.mode}
            relay={props.relay}
            kafka={props.kafka}
            disabled={!props.chaosEnabled}
          />
        ))}
      </ul>
      {failurePointsOf('cluster').length > 0 ? (
        <p className="failures-more">
          The broker&rsquo;s failures (kill the partition leader, stop a follower) are in the{' '}
          <a href="#kafka">Kafka panel</a>, beside the partitions they break.
        </p>
      ) : null}
    </>
  );
}
