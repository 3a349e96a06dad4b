import type { RequestHandler } from 'express';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { OrderMode } from './config.ts';

/**
 * order-api's Prometheus metrics on a registry of its own (not prom-client's global
 * one), so several apps in one test process do not collide.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly ordersCreated: Counter<'mode'>;
  readonly naivePublishFailures: Counter;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests served, by route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration, by route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
    this.ordersCreated = new Counter({
      name: 'orders_created_total',
      help: 'Orders committed, by mode (outbox or naive).',
      labelNames: ['mode'],
      registers: [this.registry],
    });
    this.naivePublishFailures = new Counter({
      name: 'naive_publish_failures_total',
      help: 'Naive-mode events whose produce failed after the order committed: lost events.',
      registers: [this.registry],
    });
    // Start every mode at 0 so a dashboard sees the series before the first order.
    for (const mode of ['outbox', 'naive'] satisfies OrderMode[])
      this.ordersCreated.inc({ mode }, 0);
  }

  /** Times every request; labels by the matched route pattern, never the raw URL (cardinality). */
  middleware(): RequestHandler {
    return (req, res, next) => {
      const end = this.httpDuration.startTimer();
      res.once('finish', () => {
        const route = (req.route as { path?: unknown } | undefined)?.path;
        const labels = {
          method: req.method,
          route: typeof route === 'string' ? `${req.baseUrl}${route}` : 'unmatched',
          status: String(res.statusCode),
        };
        end(labels);
        this.httpRequests.inc(labels);
      });
      next();
    };
  }
}
