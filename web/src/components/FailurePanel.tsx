import {
  type FailurePointInfo,
  type FailurePointState,
  type OrderMode,
  type RelayKind,
} from '@outbox/dashboard-api/contract';
import { useArm } from '../api/queries.ts';
import { FAILURE_EXTRAS, FAILURE_POINTS, armRequestFor } from '@outbox/dashboard-api/teaching';
import { useNow } from '../use-now.ts';

function stateText(info: FailurePointInfo, state: FailurePointState | undefined, now: number) {
  if (!state) return null;
  if (info.kind === 'window' && state.active && state.activeUntil) {
    const left = Math.max(0, Math.ceil((Date.parse(state.activeUntil) - now) / 1000));
    return `outage: ${left} s left`;
  }
  // A switch shows its state inside the button (ON); a pill would say it twice.
  if (info.kind === 'switch') return null;
  if (state.active) return state.remaining > 1 ? `armed ×${state.remaining}` : 'armed: next one';
  return state.fired > 0 ? `fired ${state.fired}×` : null;
}

function FailureCard(props: {
  info: FailurePointInfo;
  state: FailurePointState | undefined;
  mode: OrderMode | undefined;
  relay: RelayKind | undefined;
  disabled: boolean;
}) {
  const { info, state, mode, relay } = props;
  const arm = useArm();
  const now = useNow();
  const active = state?.active ?? false;
  const extras = FAILURE_EXTRAS[info.name];
  const wrongMode =
    info.appliesTo === 'cdc'
      ? relay !== undefined && relay !== 'cdc'
      : info.appliesTo !== 'both' && mode !== undefined && mode !== info.appliesTo;
  const status = stateText(info, state, now);
  const descId = `fp-${info.name.replace('.', '-')}-desc`;
  return (
    <li
      className={`failure ${active ? 'failure-active' : ''}`}
      data-testid={`failure-${info.name}`}
    >
      <div className="failure-head">
        <button
          type="button"
          className={`btn btn-failure ${info.kind === 'switch' ? 'btn-switch' : ''}`}
          aria-pressed={info.kind === 'shot' ? undefined : active}
          aria-describedby={descId}
          disabled={props.disabled || arm.isPending}
          onClick={() => arm.mutate({ name: info.name, request: armRequestFor(info, active) })}
        >
          {info.label}
          {info.kind !== 'shot' && active ? <span className="btn-state">ON</span> : null}
        </button>
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
      {wrongMode && info.appliesTo === 'cdc' ? (
        <p className="failure-mode">
          Happens while <b>Debezium CDC</b> publishes only: switch the relay above.
        </p>
      ) : wrongMode ? (
        <p className="failure-mode">
          Happens in <b>{info.appliesTo === 'naive' ? 'naive dual-write' : 'outbox'}</b> mode only:
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
      <code className="cli" title="The same from a shell">
        {extras.cli}
      </code>
    </li>
  );
}

/** One button per failure point, in the seed's language: what happens, why, what to watch. */
export function FailurePanel(props: {
  states: FailurePointState[] | undefined;
  mode: OrderMode | undefined;
  relay: RelayKind | undefined;
  chaosEnabled: boolean;
}) {
  const byName = new Map(props.states?.map((s) => [s.name, s]));
  return (
    <>
      {!props.chaosEnabled ? (
        <p className="error">Failure points are disabled on this server (CHAOS_ENABLED=false).</p>
      ) : null}
      <ul className="failures">
        {FAILURE_POINTS.map((info) => (
          <FailureCard
            key={info.name}
            info={byName.get(info.name) ?? info}
            state={byName.get(info.name)}
            mode={props.mode}
            relay={props.relay}
            disabled={!props.chaosEnabled}
          />
        ))}
      </ul>
    </>
  );
}
