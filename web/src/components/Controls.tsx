import type { OrderMode, RelayKind, RelaySetting } from '@outbox/dashboard-api/contract';
import { useEffect, useRef, useState } from 'react';
import { controlToken } from '../api/client.ts';
import { useReset, useSetMode, useSetRelay, useSetTraffic } from '../api/queries.ts';

const MODE_TEXT: Record<OrderMode, { label: string; how: string }> = {
  naive: {
    label: 'Naive dual-write',
    how: 'COMMIT the order, then publish to Kafka from the request handler: two systems, no shared transaction.',
  },
  outbox: {
    label: 'Outbox',
    how: 'INSERT the order and its event into outbox in one transaction; a relay publishes committed rows.',
  },
};

/** How order-api writes new orders, switched live through demo_settings. */
export function ModeSwitch({ mode }: { mode: OrderMode | undefined }) {
  const setMode = useSetMode();
  // Set in the change handler itself: React puts a controlled radio back when the
  // handler changes no state synchronously, and the mutation's state comes a tick later.
  const [chosen, setChosen] = useState<OrderMode | null>(null);
  useEffect(() => {
    if (chosen !== null && chosen === mode) setChosen(null);
  }, [chosen, mode]);
  const shown = chosen ?? mode;
  return (
    <fieldset className="mode" data-testid="mode-switch">
      <legend>Order mode</legend>
      <div className="segmented">
        {(['naive', 'outbox'] as const).map((m) => (
          <label key={m} className={`segment segment-${m} ${shown === m ? 'segment-on' : ''}`}>
            <input
              type="radio"
              name="order-mode"
              value={m}
              checked={shown === m}
              onChange={() => {
                setChosen(m);
                setMode.mutate(m, { onError: () => setChosen(null) });
              }}
            />
            {MODE_TEXT[m].label}
          </label>
        ))}
      </div>
      <p className="mode-how">{shown ? MODE_TEXT[shown].how : 'Loading…'}</p>
      {setMode.error ? (
        <p className="error" role="alert">
          {setMode.error.message}
        </p>
      ) : null}
    </fieldset>
  );
}

const RELAY_TEXT: Record<RelayKind, { label: string; how: string }> = {
  polling: {
    label: 'Polling worker',
    how: 'publisher-worker claims pending rows (LISTEN/NOTIFY wake-ups, a poll as the net), publishes, marks them sent.',
  },
  cdc: {
    label: 'Debezium CDC',
    how: "Kafka Connect reads the outbox's inserts from the WAL (a replication slot) and publishes them; the workers only mark sent what the slot confirmed.",
  },
};

/**
 * Which relay publishes the outbox, switched live: the demo carries the switch out
 * (start Connect, let the workers drain, hand over; or stop Connect and relay again),
 * so the segment shows what publishes now and the step while a switch runs.
 */
export function RelaySwitch({ relay }: { relay: RelaySetting | undefined }) {
  const setRelay = useSetRelay();
  const switching = relay !== undefined && relay.wanted !== relay.active;
  return (
    <fieldset className="mode relay" data-testid="relay-switch">
      <legend>Relay</legend>
      <div className="segmented">
        {(['polling', 'cdc'] as const).map((r) => (
          <label
            key={r}
            className={`segment segment-${r} ${relay?.active === r ? 'segment-on' : ''}`}
          >
            <input
              type="radio"
              name="relay"
              value={r}
              checked={relay?.active === r}
              disabled={switching || setRelay.isPending}
              onChange={() => setRelay.mutate(r)}
            />
            {RELAY_TEXT[r].label}
          </label>
        ))}
      </div>
      <p className="mode-how" data-testid="relay-status" aria-live="polite">
        {relay === undefined
          ? 'Loading…'
          : switching
            ? `Switching to ${RELAY_TEXT[relay.wanted].label}: ${relay.phase ?? 'starting'}…`
            : relay.phase
              ? relay.phase
              : RELAY_TEXT[relay.active].how}
      </p>
      {setRelay.error ? (
        <p className="error" role="alert">
          {setRelay.error.message}
        </p>
      ) : null}
    </fieldset>
  );
}

const PRESETS = [0, 5, 20, 50];

/** Orders per second of the demo's traffic generator (the traffic_rate setting). */
export function TrafficControl({ rate, max }: { rate: number | undefined; max: number }) {
  const setTraffic = useSetTraffic();
  const [draft, setDraft] = useState<number | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  // A dragged slider sends one request when it rests, not one per pixel.
  const propose = (value: number) => {
    setDraft(value);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      setTraffic.mutate(value, { onSettled: () => setDraft(null) });
    }, 300);
  };
  const shown = draft ?? rate ?? 0;
  const sliderMax = Math.min(max, 200);
  return (
    <fieldset className="traffic" data-testid="traffic-control">
      <legend>Traffic</legend>
      <div className="traffic-row">
        <input
          type="range"
          min={0}
          max={sliderMax}
          step={1}
          value={Math.min(shown, sliderMax)}
          aria-label="Orders per second"
          onChange={(e) => propose(Number(e.target.value))}
        />
        <output className="traffic-value" data-testid="traffic-rate" aria-live="polite">
          {shown} orders/s
        </output>
      </div>
      <div className="presets" role="group" aria-label="Traffic presets">
        {PRESETS.map((p) => (
          <button
            key={p}
            type="button"
            className={`btn btn-small ${shown === p ? 'btn-on' : ''}`}
            aria-pressed={shown === p}
            onClick={() => {
              clearTimeout(timer.current);
              setDraft(p);
              setTraffic.mutate(p, { onSettled: () => setDraft(null) });
            }}
          >
            {p === 0 ? 'Stop' : `${p}/s`}
          </button>
        ))}
      </div>
      {setTraffic.error ? (
        <p className="error" role="alert">
          {setTraffic.error.message}
        </p>
      ) : null}
    </fieldset>
  );
}

/** Empties the demo's data and disarms every point: asks for a second click. */
export function ResetButton({ onReset }: { onReset: () => void }) {
  const reset = useReset();
  const [confirming, setConfirming] = useState(false);
  useEffect(() => {
    if (!confirming) return;
    const t = setTimeout(() => setConfirming(false), 4_000);
    return () => clearTimeout(t);
  }, [confirming]);
  return (
    <div className="reset">
      <button
        type="button"
        className={`btn ${confirming ? 'btn-danger' : 'btn-ghost'}`}
        disabled={reset.isPending}
        onClick={() => {
          if (!confirming) return setConfirming(true);
          setConfirming(false);
          reset.mutate(undefined, { onSuccess: onReset });
        }}
      >
        {confirming ? 'Click again: erase all orders' : 'Reset data'}
      </button>
      {reset.error ? (
        <p className="error" role="alert">
          {reset.error.message}
        </p>
      ) : null}
    </div>
  );
}

/** Asked for only when dashboard-api runs with CONTROL_TOKEN. */
export function TokenField() {
  const [value, setValue] = useState(controlToken.get);
  return (
    <label className="token">
      Control token
      <input
        type="password"
        value={value}
        autoComplete="off"
        onChange={(e) => {
          setValue(e.target.value);
          controlToken.set(e.target.value);
        }}
      />
    </label>
  );
}

/** The strip above the numbers: mode, traffic, reset (and the token when needed). */
export function Controls(props: {
  mode: OrderMode | undefined;
  relay: RelaySetting | undefined;
  rate: number | undefined;
  maxRate: number;
  needsToken: boolean;
  onReset: () => void;
}) {
  return (
    <section className="controls" aria-label="Controls">
      <ModeSwitch mode={props.mode} />
      <RelaySwitch relay={props.relay} />
      <TrafficControl rate={props.rate} max={props.maxRate} />
      <div className="controls-end">
        {props.needsToken ? <TokenField /> : null}
        <ResetButton onReset={props.onReset} />
      </div>
    </section>
  );
}
