import type { StatsMessage } from '@outbox/dashboard-api/contract';
import type { Highlight } from '../live/highlight.ts';
import { SCENARIO_ROWS, type ScenarioRow } from '@outbox/dashboard-api/teaching';
import { formatAgo, formatCount } from '../format.ts';
import { useNow } from '../use-now.ts';

const GROUPS: { id: ScenarioRow['group']; title: string }[] = [
  { id: 'dual-write', title: 'The seed’s four scenarios of a dual write' },
  { id: 'outbox', title: 'At-least-once: what the outbox still needs (the pitfalls)' },
];

const cellTone = (v: string) =>
  v.startsWith('FAIL') ? 'cell-fail' : v === '???' || v.includes('twice') ? 'cell-unknown' : '';

/** The seed's table, with the row that just happened highlighted. */
export function ScenarioTable(props: {
  highlight: Highlight | null;
  counts: StatsMessage['scenarios']['counts'] | undefined;
}) {
  const now = useNow();
  const { highlight } = props;
  return (
    <div className="table-wrap">
      <table className="scenarios" data-testid="scenario-table">
        <thead>
          <tr>
            <th scope="col">Scenario</th>
            <th scope="col">DB</th>
            <th scope="col">Kafka</th>
            <th scope="col">What happens</th>
            <th scope="col">What the outbox / inbox does</th>
          </tr>
        </thead>
        {GROUPS.map((g) => (
          <tbody key={g.id}>
            <tr className="group-row">
              <th colSpan={5} scope="colgroup">
                {g.title}
              </th>
            </tr>
            {SCENARIO_ROWS.filter((r) => r.group === g.id).map((r) => {
              const hit = highlight?.row === r.id ? highlight : null;
              const count =
                r.group === 'dual-write' ? props.counts?.[r.id as 'happy_path'] : undefined;
              return (
                <tr
                  key={r.id}
                  data-testid={`scenario-${r.id}`}
                  data-highlighted={hit ? hit.tone : undefined}
                  className={hit ? `row-hit row-${hit.tone}` : ''}
                  aria-current={hit ? 'true' : undefined}
                >
                  <th scope="row" title={r.seed}>
                    <span className="scenario-title">{r.title}</span>
                    {hit ? (
                      <span className={`hit-badge hit-${hit.tone}`}>
                        {hit.tone === 'live'
                          ? 'happening now'
                          : `just happened${hit.at ? ` · ${formatAgo(hit.at, now)}` : ''}`}
                      </span>
                    ) : null}
                    {count ? <span className="seen">seen {formatCount(count)}×</span> : null}
                    {r.button ? <span className="reproduce">button: {r.button}</span> : null}
                  </th>
                  <td className={cellTone(r.db)} data-label="DB">
                    {r.db}
                  </td>
                  <td className={cellTone(r.kafka)} data-label="Kafka">
                    {r.kafka}
                  </td>
                  <td data-label="What happens">
                    {r.consequence}
                    {hit?.detail ? <span className="hit-detail">{hit.detail}</span> : null}
                  </td>
                  <td className="fix" data-label="Outbox / inbox">
                    {r.fix}
                  </td>
                </tr>
              );
            })}
          </tbody>
        ))}
      </table>
    </div>
  );
}
