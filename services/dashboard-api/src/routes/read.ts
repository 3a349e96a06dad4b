import { audit, sentNotDelivered } from '@outbox/lab';
import { Router } from 'express';
import type { Pool } from 'pg';
import { z } from 'zod';
import {
  MAX_TRAFFIC_RATE,
  type AuditResponse,
  type EventsResponse,
  type StateResponse,
} from '../contract.ts';
import { SCENARIOS } from '../teaching/index.ts';
import type { ChaosPanel } from '../chaos/failure-points.ts';
import { outboxQuery } from '../http/client-input.ts';
import { HttpError, parseOr400 } from '../http/errors.ts';
import { orderJourney } from '../ops/journey.ts';
import { browseOutbox } from '../ops/outbox-browser.ts';
import { readSettings } from '../settings/settings.ts';
import type { StatsEngine } from '../stats/engine.ts';
import type { SpanStore } from '../traces/span-store.ts';

export interface ReadDeps {
  pool: Pool;
  engine: StatsEngine;
  chaos: ChaosPanel;
  chaosEnabled: boolean;
  controlRequiresToken: boolean;
  settleSeconds: number;
  spans: SpanStore;
}

const uuid = z.uuid();
const eventsQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) });
const auditQuery = z.object({ settleSeconds: z.coerce.number().min(0).max(3_600).optional() });

/** The read-only views: open to anyone who reaches the server (no token). */
export function readRouter(deps: ReadDeps): Router {
  const router = Router();

  router.get('/api/state', async (_req, res) => {
    const [settings, failurePoints] = await Promise.all([
      readSettings(deps.pool),
      deps.chaos.list(),
    ]);
    const body: StateResponse = {
      settings,
      failurePoints,
      scenarios: [...SCENARIOS],
      chaosEnabled: deps.chaosEnabled,
      controlRequiresToken: deps.controlRequiresToken,
      maxTrafficRate: MAX_TRAFFIC_RATE,
    };
    res.json(body);
  });

  router.get('/api/stats', (_req, res) => {
    if (!deps.engine.latest) throw new HttpError(503, 'stats not computed yet');
    res.json(deps.engine.latest);
  });

  router.get('/api/events', (req, res) => {
    const { limit } = parseOr400(eventsQuery, req.query, 'query');
    res.json({ events: deps.engine.feed.last(limit) } satisfies EventsResponse);
  });

  router.get('/api/outbox', async (req, res) => {
    const query = parseOr400(outboxQuery, req.query, 'query');
    res.json(await browseOutbox(deps.pool, query));
  });

  router.get('/api/orders/:id/journey', async (req, res) => {
    const id = parseOr400(uuid, req.params.id, 'order id (a UUID)');
    const journey = await orderJourney(deps.pool, id, deps.spans);
    if (!journey) throw new HttpError(404, `no order, outbox row or delivery for ${id}`);
    res.json(journey);
  });

  // Full scans of every table: on demand only, never on the stats tick.
  router.get('/api/audit', async (req, res) => {
    const { settleSeconds = deps.settleSeconds } = parseOr400(auditQuery, req.query, 'query');
    const started = performance.now();
    const [report, lost] = await Promise.all([
      audit(deps.pool, { settleSeconds }),
      sentNotDelivered(deps.pool, { settleSeconds }),
    ]);
    const body: AuditResponse = {
      ...report,
      sentNotDelivered: lost,
      settleSeconds,
      tookMs: Math.round(performance.now() - started),
    };
    res.json(body);
  });

  return router;
}
