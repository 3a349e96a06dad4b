import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** dashboard-api's Prometheus metrics, on a registry of its own (several apps per test process). */
export class DashboardMetrics {
  readonly registry = new Registry();
  readonly tickDuration: Histogram;
  readonly socketClients: Gauge;
  readonly controlActions: Counter<'action' | 'status'>;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.tickDuration = new Histogram({
      name: 'dashboard_stats_tick_duration_seconds',
      help: 'Time to compute one stats message (all its queries).',
      buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1],
      registers: [this.registry],
    });
    this.socketClients = new Gauge({
      name: 'dashboard_socket_clients',
      help: 'Connected socket.io clients of the stats stream.',
      registers: [this.registry],
    });
    this.controlActions = new Counter({
      name: 'dashboard_control_actions_total',
      help: 'Control requests (failure points, mode, traffic, reset, requeue) by outcome.',
      labelNames: ['action', 'status'],
      registers: [this.registry],
    });
  }
}
