import type { CdcView } from '@outbox/dashboard-api/contract';
import { formatBytes, formatCount } from '../format.ts';

/**
 * While Debezium publishes: the replication slot is the relay's truth. Lag is the WAL
 * Connect has not confirmed; retained is what PostgreSQL keeps for the slot, which
 * grows without bound while Connect is down (the seed's operational cost of CDC).
 */
export function CdcPanel({ cdc, publishPerSecond }: { cdc: CdcView; publishPerSecond: number }) {
  const taskOk = cdc.connectTask === 'RUNNING';
  return (
    <div className="group" data-testid="cdc-panel">
      <p className="group-head">
        <span
          className={`group-state group-${taskOk ? 'ok' : 'stalled'}`}
          data-testid="cdc-task"
          data-state={cdc.connectTask}
        >
          Connect task {cdc.connectTask.toLowerCase()}
        </span>
        <span className="group-meta">
          slot <code>{cdc.slot}</code> {cdc.slotActive ? 'read by Connect' : 'not read'}
        </span>
      </p>
      <dl className="cdc-figures">
        <dt>Slot lag</dt>
        <dd data-testid="cdc-lag-bytes">
          {formatBytes(cdc.lagBytes)}
          {cdc.lagSeconds !== null ? ` · ${cdc.lagSeconds.toFixed(2)} s` : ''}
        </dd>
        <dt>WAL retained</dt>
        <dd data-testid="cdc-retained">
          {formatBytes(cdc.retainedBytes)}
          {cdc.walStatus ? ` (${cdc.walStatus})` : ''}
        </dd>
        <dt>Confirmed as sent</dt>
        <dd>{formatCount(Math.round(publishPerSecond))} events/s</dd>
      </dl>
      <p className="group-why">
        {!cdc.slotExists
          ? 'The slot is gone: the switch back to the polling relay is under way.'
          : taskOk
            ? 'Debezium reads inserts from the WAL and publishes them; the workers mark rows sent once the slot confirms them.'
            : 'Nobody is publishing: the WAL since the slot’s confirmed position is kept, and Connect resumes from it once it is back.'}
      </p>
    </div>
  );
}
