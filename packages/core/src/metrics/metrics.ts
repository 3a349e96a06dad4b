import type { Pool } from 'pg';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { pendingStats } from '../relay/sql.ts';

/**
 * The seed's five outbox metrics (plus dead-lettered), on a prom-client registry.
 * outbox_pending and outbox_lag_seconds are read from PostgreSQL at scrape time, so
 * every replica reports the same truth; both queries read the partial pending index.
 */
export class OutboxMetrics {
  readonly published: Counter<'topic'>;
  readonly publishErrors: Counter<'kind'>;
  readonly tickDuration: Histogram;
  readonly pending: Gauge;
  readonly lagSeconds: Gauge;
  readonly deadLettered: Gauge;

  constructor(
    readonly registry: Registry,
    pool?: Pool,
  ) {
    this.published = new Counter({
      name: 'outbox_published_total',
      help: 'Outbox events acknowledged by Kafka and marked sent.',
      labelNames: ['topic'],
      registers: [registry],
    });
    this.publishErrors = new Counter({
      name: 'outbox_publish_errors_total',
      help: 'Failed publish attempts: kind=row (the event is at fault) or kind=relay (Kafka or PostgreSQL unavailable).',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.tickDuration = new Histogram({
      name: 'outbox_worker_tick_duration_seconds',
      help: 'Duration of one relay tick: claim, produce, mark sent, commit.',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    let stats:
      | Promise<{ pending: number; dead_lettered: number; lag_seconds: number } | undefined>
      | undefined;
    // One query per scrape for the three gauges, whichever is collected first.
    const readStats = () => {
      stats ??= pool
        ? pool
            .query<{ pending: number; dead_lettered: number; lag_seconds: number }>(pendingStats())
            .then((r) => r.rows[0])
            .catch(() => undefined)
            .finally(() => setTimeout(() => (stats = undefined), 100))
        : Promise.resolve(undefined);
      return stats;
    };
    this.pending = new Gauge({
      name: 'outbox_pending',
      help: 'Outbox events not yet published (alert: > 1000).',
      registers: [registry],
      async collect() {
        const s = await readStats();
        if (s) this.set(s.pending);
      },
    });
    this.lagSeconds = new Gauge({
      name: 'outbox_lag_seconds',
      help: 'Age of the oldest pending outbox event, now - min(created_at) (alert: > 60).',
      registers: [registry],
      async collect() {
        const s = await readStats();
        if (s) this.set(s.lag_seconds);
      },
    });
    this.deadLettered = new Gauge({
      name: 'outbox_dead_lettered',
      help: 'Outbox events that reached the attempt cap and wait for an operator.',
      registers: [registry],
      async collect() {
        const s = await readStats();
        if (s) this.set(s.dead_lettered);
      },
    });
  }
}
