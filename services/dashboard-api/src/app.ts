import type { Logger } from '@outbox/core';
import express, { type Express } from 'express';
import type { Pool } from 'pg';
import type { ChaosPanel } from './chaos/failure-points.ts';
import type { DashboardConfig } from './config.ts';
import { errorHandler, notFound } from './http/errors.ts';
import { webApp } from './http/web-app.ts';
import type { DashboardMetrics } from './metrics.ts';
import { controlRouter } from './routes/control.ts';
import { readRouter } from './routes/read.ts';
import { tracesRouter } from './routes/traces.ts';
import type { OriginPolicy } from './security/origins.ts';
import type { StatsEngine } from './stats/engine.ts';
import type { SpanStore } from './traces/span-store.ts';

export interface AppDeps {
  config: Pick<DashboardConfig, 'CONTROL_TOKEN' | 'CHAOS_ENABLED' | 'WEB_DIST' | 'SETTLE_SECONDS'>;
  pool: Pool;
  engine: StatsEngine;
  chaos: ChaosPanel;
  origins: OriginPolicy;
  metrics: DashboardMetrics;
  /** Spans received on POST /v1/traces, for the order journey's legs. */
  spans: SpanStore;
  log: Logger;
}

/** The dashboard's HTTP app (REST + the web build), with no listening socket. */
export function createApp(deps: AppDeps): Express {
  const { config } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', stats: deps.engine.latest ? 'ticking' : 'starting' });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });

  app.use('/api', ...deps.origins.middleware());
  app.use(
    readRouter({
      pool: deps.pool,
      engine: deps.engine,
      chaos: deps.chaos,
      chaosEnabled: config.CHAOS_ENABLED,
      controlRequiresToken: config.CONTROL_TOKEN !== undefined,
      settleSeconds: config.SETTLE_SECONDS,
      spans: deps.spans,
    }),
  );
  app.use(tracesRouter({ spans: deps.spans, token: config.CONTROL_TOKEN }));
  app.use(
    controlRouter({
      pool: deps.pool,
      engine: deps.engine,
      chaos: deps.chaos,
      chaosEnabled: config.CHAOS_ENABLED,
      token: config.CONTROL_TOKEN,
      metrics: deps.metrics,
    }),
  );
  app.use('/api', notFound);
  app.use(...webApp(config.WEB_DIST));
  app.use(notFound);
  app.use(errorHandler(deps.log));
  return app;
}
