import { prometheusViewSchema, type PrometheusView } from '@outbox/dashboard-api/contract';
import { describe, expect, it } from 'vitest';
import { alertBadge, graphUrl } from '../src/live/alerts.ts';

const URL = 'http://127.0.0.1:9090';

const view = (over: Partial<PrometheusView> = {}): PrometheusView =>
  prometheusViewSchema.parse({
    url: URL,
    status: 'connected',
    error: null,
    readAt: '2026-12-07T10:00:00.000Z',
    alerts: [
      {
        name: 'OutboxPendingHigh',
        state: 'firing',
        activeAt: '2026-12-07T09:55:00.000Z',
        expr: 'max(outbox_pending) > 1000',
        forSeconds: 300,
        value: 1001,
      },
    ],
    ...over,
  });

describe('the alert badge beside a chart threshold', () => {
  it('shows the rule state from Prometheus and links to the graph of the metric', () => {
    const badge = alertBadge(view(), 'OutboxPendingHigh', 'outbox_pending');
    expect(badge.state).toBe('firing');
    expect(badge.label).toBe('firing');
    expect(badge.title).toContain('max(outbox_pending) > 1000 for 5m');
    expect(badge.title).toContain('since');
    expect(badge.graphUrl).toBe(`${URL}/graph?g0.expr=outbox_pending&g0.tab=0&g0.range_input=5m`);
  });

  it('says unknown, with the reason, when Prometheus does not answer', () => {
    const down = view({
      status: 'unreachable',
      error: 'fetch failed: connect ECONNREFUSED',
      alerts: [],
    });
    const badge = alertBadge(down, 'OutboxPendingHigh', 'outbox_pending');
    expect(badge.state).toBe('unknown');
    expect(badge.title).toContain('ECONNREFUSED');
    expect(badge.graphUrl).not.toBeNull();
    expect(alertBadge(view({ status: 'connecting' }), 'OutboxPendingHigh', 'x').state).toBe(
      'unknown',
    );
  });

  it('says so when the rule is not loaded, or when there is no Prometheus at all', () => {
    expect(alertBadge(view(), 'OutboxLagHigh', 'outbox_lag_seconds')).toMatchObject({
      state: 'unknown',
      label: 'no rule',
    });
    expect(alertBadge(undefined, 'OutboxLagHigh', 'outbox_lag_seconds')).toMatchObject({
      state: 'none',
      graphUrl: null,
    });
  });

  it('encodes the expression into the graph link', () => {
    expect(graphUrl(URL, 'max(outbox_lag_seconds) > 60')).toBe(
      `${URL}/graph?g0.expr=max(outbox_lag_seconds)%20%3E%2060&g0.tab=0&g0.range_input=5m`,
    );
  });
});
