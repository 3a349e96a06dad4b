import type { ReactElement } from 'react';
import type { StatsMessage } from '@outbox/dashboard-api/contract';
import {
  Area,
  AreaChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { alertBadge, type AlertBadge } from '../live/alerts.ts';
import type { Sample } from '../live/series.ts';
import { formatClock, formatCount, formatRate, formatSeconds } from '../format.ts';

/** The seed's alert thresholds ("Мониторинг"): outbox_pending > 1000, outbox_lag_seconds > 60. */
const PENDING_ALERT = 1_000;
const LAG_ALERT_SECONDS = 60;
/** Their rules in packages/ops/alerts/outbox.rules.yml, and the metric each one watches. */
const PENDING_RULE = { alert: 'OutboxPendingHigh', metric: 'outbox_pending' };
const LAG_RULE = { alert: 'OutboxLagHigh', metric: 'outbox_lag_seconds' };

const axisTime = (t: number) => formatClock(t).slice(3);
const lagTick = (s: number) => `${s < 10 ? Number(s.toFixed(1)) : Math.round(s)} s`;

/** The rule's state in Prometheus (colour-coded) and a link to the metric's graph there. */
function AlertState({ badge, testId }: { badge: AlertBadge; testId: string }) {
  return (
    <span className="alert-rule">
      <span
        className={`alert-state alert-state-${badge.state}`}
        data-testid={`${testId}-alert-state`}
        data-state={badge.state}
        title={badge.title}
      >
        {badge.label}
      </span>
      {badge.graphUrl && (
        <a
          className="alert-graph"
          href={badge.graphUrl}
          target="_blank"
          rel="noreferrer"
          data-testid={`${testId}-graph`}
          title="This metric's graph in Prometheus"
        >
          graph ↗
        </a>
      )}
    </span>
  );
}

function ChartCard(props: {
  title: string;
  value: string;
  alert: string;
  alarming: boolean;
  testId: string;
  badge?: AlertBadge;
  children: ReactElement;
}) {
  return (
    <figure className={`chart ${props.alarming ? 'chart-alarm' : ''}`} data-testid={props.testId}>
      <figcaption>
        <span className="chart-title">{props.title}</span>
        <span className="chart-value" data-testid={`${props.testId}-value`}>
          {props.value}
        </span>
        <span className="chart-alert">{props.alert}</span>
        {props.badge && <AlertState badge={props.badge} testId={props.testId} />}
      </figcaption>
      <div className="chart-plot">
        <ResponsiveContainer width="100%" height={150}>
          {props.children}
        </ResponsiveContainer>
      </div>
    </figure>
  );
}

const common = {
  margin: { top: 6, right: 8, bottom: 0, left: -12 },
};

/** Pending, lag and the publish/consume rates over the last minutes. */
export function LiveCharts({
  series,
  stats,
}: {
  series: readonly Sample[];
  stats: StatsMessage | undefined;
}) {
  const data = series as Sample[];
  const pending = stats?.outbox.pending ?? 0;
  const lag = stats?.outbox.lagSeconds ?? 0;
  const pendingBadge = alertBadge(stats?.prometheus, PENDING_RULE.alert, PENDING_RULE.metric);
  const lagBadge = alertBadge(stats?.prometheus, LAG_RULE.alert, LAG_RULE.metric);
  const grid = <CartesianGrid strokeDasharray="3 3" stroke="var(--grid)" vertical={false} />;
  const x = (
    <XAxis
      dataKey="t"
      type="number"
      scale="time"
      domain={['dataMin', 'dataMax']}
      tickFormatter={axisTime}
      tick={{ fontSize: 11 }}
      minTickGap={40}
    />
  );
  const tooltip = (
    <Tooltip
      labelFormatter={(t) => formatClock(Number(t))}
      formatter={(v) => formatRate(Number(v))}
      isAnimationActive={false}
    />
  );
  return (
    <div className="charts">
      <ChartCard
        title="Outbox pending"
        value={formatCount(pending)}
        alert={`alert > ${formatCount(PENDING_ALERT)}`}
        alarming={pending > PENDING_ALERT || pendingBadge.state === 'firing'}
        testId="chart-pending"
        badge={pendingBadge}
      >
        <AreaChart data={data} {...common}>
          {grid}
          {x}
          <YAxis
            allowDecimals={false}
            tick={{ fontSize: 11 }}
            width={48}
            domain={[0, (max: number) => Math.max(4, max)]}
          />
          {tooltip}
          <Area
            type="monotone"
            dataKey="pending"
            name="pending"
            stroke="var(--c-pending)"
            fill="var(--c-pending-fill)"
            isAnimationActive={false}
          />
        </AreaChart>
      </ChartCard>
      <ChartCard
        title="Lag (oldest pending)"
        value={formatSeconds(lag)}
        alert={`alert > ${LAG_ALERT_SECONDS} s`}
        alarming={lag > LAG_ALERT_SECONDS || lagBadge.state === 'firing'}
        testId="chart-lag"
        badge={lagBadge}
      >
        <AreaChart data={data} {...common}>
          {grid}
          {x}
          <YAxis
            tick={{ fontSize: 11 }}
            width={48}
            tickFormatter={lagTick}
            domain={[0, (max: number) => Math.max(1, Math.ceil(max))]}
          />
          {tooltip}
          <Area
            type="monotone"
            dataKey="lagSeconds"
            name="lag (s)"
            stroke="var(--c-lag)"
            fill="var(--c-lag-fill)"
            isAnimationActive={false}
          />
        </AreaChart>
      </ChartCard>
      <ChartCard
        title="Relay publish vs consume"
        value={`${formatRate(stats?.rates.publishPerSecond ?? 0)} / ${formatRate(stats?.rates.consumePerSecond ?? 0)} per s`}
        alert={`orders ${formatRate(stats?.rates.ordersPerSecond ?? 0)}/s`}
        alarming={false}
        testId="chart-rates"
      >
        <LineChart data={data} {...common}>
          {grid}
          {x}
          <YAxis tick={{ fontSize: 11 }} width={48} />
          {tooltip}
          <Legend iconType="plainline" wrapperStyle={{ fontSize: 12 }} />
          <Line
            type="monotone"
            dataKey="publishPerSecond"
            name="relay published/s"
            stroke="var(--c-publish)"
            dot={false}
            strokeWidth={2}
            isAnimationActive={false}
          />
          <Line
            type="monotone"
            dataKey="consumePerSecond"
            name="consumed/s"
            stroke="var(--c-consume)"
            dot={false}
            strokeWidth={2}
            strokeDasharray="5 3"
            isAnimationActive={false}
          />
        </LineChart>
      </ChartCard>
    </div>
  );
}
