import type { AlertState, PrometheusView } from '@outbox/dashboard-api/contract';
import { formatClock } from '../format.ts';

/** What a chart shows beside its threshold: the rule's state in Prometheus, and its graph. */
export interface AlertBadge {
  /** 'none': dashboard-api has no Prometheus to ask. */
  state: AlertState | 'none';
  /** The word on the badge. */
  label: string;
  /** The rule, its expression, since when, or why the state is not known. */
  title: string;
  /** Prometheus' graph of the metric; null without a Prometheus. */
  graphUrl: string | null;
}

/**
 * Prometheus' own graph page for `expr` (the UI of 2.x reads these parameters), over
 * the last 5 minutes like the dashboard's charts (its default hour shows a fresh demo
 * as a sliver at the right edge).
 */
export function graphUrl(prometheusUrl: string, expr: string): string {
  return `${prometheusUrl}/graph?g0.expr=${encodeURIComponent(expr)}&g0.tab=0&g0.range_input=5m`;
}

const forText = (s: number) => (s % 60 === 0 && s > 0 ? `${s / 60}m` : `${s}s`);

/**
 * The badge for `alert` (a rule of packages/ops/alerts/outbox.rules.yml) on the chart of
 * `metric`. Never guesses: without an answer from Prometheus the state is 'unknown',
 * and the title says why.
 */
export function alertBadge(
  prometheus: PrometheusView | undefined,
  alert: string,
  metric: string,
): AlertBadge {
  if (!prometheus)
    return {
      state: 'none',
      label: 'no Prometheus',
      title: 'dashboard-api has no PROMETHEUS_URL: the alert state is not known here',
      graphUrl: null,
    };
  const graph = graphUrl(prometheus.url, metric);
  if (prometheus.status === 'connecting')
    return {
      state: 'unknown',
      label: 'unknown',
      title: `${alert}: no answer from Prometheus (${prometheus.url}) yet`,
      graphUrl: graph,
    };
  if (prometheus.status === 'unreachable')
    return {
      state: 'unknown',
      label: 'unknown',
      title: `${alert}: Prometheus (${prometheus.url}) not reachable: ${prometheus.error ?? 'no answer'}`,
      graphUrl: graph,
    };
  const rule = prometheus.alerts.find((a) => a.name === alert);
  if (!rule)
    return {
      state: 'unknown',
      label: 'no rule',
      title: `Prometheus (${prometheus.url}) has no alerting rule ${alert} loaded`,
      graphUrl: graph,
    };
  const since = rule.activeAt ? ` since ${formatClock(rule.activeAt)}` : '';
  return {
    state: rule.state,
    label: rule.state,
    title: `Prometheus: ${alert} ${rule.state}${since} (${rule.expr} for ${forText(rule.forSeconds)})`,
    graphUrl: graph,
  };
}
