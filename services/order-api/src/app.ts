import { OutboxWriter, type Logger } from '@outbox/core';
import { demoTopics, validateEvent, type FailurePointGate } from '@outbox/lab';
import express, { type Express } from 'express';
import type { Producer } from 'kafkajs';
import type { Pool } from 'pg';
import type { AppConfig } from './config.ts';
import { errorHandler, notFound } from './http/errors.ts';
import type { KafkaNetwork } from './kafka.ts';
import { ApiMetrics } from './metrics.ts';
import { CreateOrderHandler } from './orders/create-order.ts';
import { NaivePublisher } from './orders/naive-publisher.ts';
import { TransitionHandler } from './orders/transition.ts';
import { ordersRouter } from './routes/orders.ts';

/** Everything the app talks to; main.ts builds them, tests build real ones too. */
export interface AppDeps {
  config: Pick<AppConfig, 'DEFAULT_MODE' | 'BODY_LIMIT' | 'TOPIC_PREFIX'> &
    Partial<Pick<AppConfig, 'WRITE_PATH'>>;
  pool: Pool;
  /** Connected producer for the naive mode (built by createKafka, through `network`). */
  producer: Producer;
  network: KafkaNetwork;
  failurePoints: FailurePointGate;
  log: Logger;
  metrics?: ApiMetrics;
  /** Replaces the SIGKILL of the crash failure point (not needed outside tests). */
  crash?: () => void;
}

const READY_TIMEOUT_MS = 2_000;

/** The order-api HTTP app, with no listening socket: main.ts and tests listen. */
export function createApp(deps: AppDeps): Express {
  const metrics = deps.metrics ?? new ApiMetrics();
  const naive = new NaivePublisher({
    producer: deps.producer,
    network: deps.network,
    topic: demoTopics(deps.config.TOPIC_PREFIX).orders,
    failurePoints: deps.failurePoints,
    metrics,
    log: deps.log,
    ...(deps.crash ? { crash: deps.crash } : {}),
  });
  // validateEvent checks the payload against the registry and stamps the latest
  // version (OrderCreated v2): a payload that breaks the schema never reaches the outbox.
  const writer = new OutboxWriter({ validate: (event) => validateEvent(event) });
  const orderDeps = { pool: deps.pool, writer, naive, log: deps.log };

  const app = express();
  app.disable('x-powered-by');
  app.use(metrics.middleware());

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        deps.pool.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS);
        }),
      ]);
      res.json({ status: 'ready' });
    } catch (error) {
      deps.log.warn({ err: error }, 'not ready: PostgreSQL did not answer');
      res.status(503).json({ error: 'database unavailable' });
    } finally {
      clearTimeout(timer);
    }
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  app.use(
    ordersRouter({
      pool: deps.pool,
      createOrder: new CreateOrderHandler({
        ...orderDeps,
        metrics,
        writePath: deps.config.WRITE_PATH ?? 'statement',
      }),
      transition: new TransitionHandler(orderDeps),
      defaultMode: deps.config.DEFAULT_MODE,
      bodyLimit: deps.config.BODY_LIMIT,
    }),
  );
  app.use(notFound);
  app.use(errorHandler(deps.log));
  return app;
}
