import type { Invariants } from '@outbox/dashboard-api/contract';
import { invariantTiles } from '../live/invariants.ts';
import { formatCount } from '../format.ts';

const BADGE = {
  broken: 'broken',
  caught: 'caught',
  warn: 'check',
  info: 'at-least-once',
  ok: 'ok',
};

/** The auditor's counters; a red tile is an invariant the patterns should have kept. */
export function InvariantTiles({ invariants }: { invariants: Invariants | undefined }) {
  if (!invariants) return <p className="muted">Waiting for the first stats message…</p>;
  return (
    <ul className="tiles" aria-label="Invariants">
      {invariantTiles(invariants).map((t) => (
        <li
          key={t.key}
          className={`tile tile-${t.severity}`}
          data-testid={`invariant-${t.key}`}
          data-severity={t.severity}
        >
          <span className="tile-label">{t.label}</span>
          <span className="tile-value" data-testid={`invariant-${t.key}-value`}>
            {formatCount(t.value)}
          </span>
          <span className="tile-hint">
            {t.severity !== 'ok' ? (
              <b className="tile-badge">{t.badge ?? BADGE[t.severity]}</b>
            ) : null}{' '}
            {t.hint}
          </span>
        </li>
      ))}
    </ul>
  );
}
