import { CDC_COMPARISON, CDC_COMPARISON_SOURCE } from '@outbox/dashboard-api/teaching';

/**
 * The seed's "Outbox + Worker vs Debezium CDC" table, with this repository's
 * measurements: one block per aspect, because the panel sits in a narrow column.
 */
export function CdcComparison() {
  return (
    <div className="cdc-comparison" data-testid="cdc-comparison">
      <h3>The seed’s comparison, measured</h3>
      <dl>
        {CDC_COMPARISON.map((row) => (
          <div key={row.aspect} className="cdc-aspect">
            <dt>{row.aspect}</dt>
            <dd>
              Seed: worker <i>{row.worker}</i> · CDC <i>{row.cdc}</i>
            </dd>
            <dd className="cdc-measured">Here: {row.measured}</dd>
          </div>
        ))}
      </dl>
      <p className="muted">Measured with {CDC_COMPARISON_SOURCE}.</p>
    </div>
  );
}
