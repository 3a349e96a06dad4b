import { requeueQuery } from '@outbox/core';
import { jsonBody, requestRelay, writeRelayAcks } from '@outbox/lab';
import { Router, type RequestHandler } from 'express';
import type { Pool } from 'pg';
import {
  acksRequestSchema,
  armRequestSchema,
  failurePointNameSchema,
  modeRequestSchema,
  relayRequestSchema,
  trafficRequestSchema,
  type RequeueResponse,
  type ResetResponse,
} from '../contract.ts';
import type { ChaosPanel } from '../chaos/failure-points.ts';
import { bigintId } from '../http/client-input.ts';
import { HttpError, parseOr400 } from '../http/errors.ts';
import type { DashboardMetrics } from '../metrics.ts';
import { outboxColumns, toOutboxView, type OutboxDbRow } from '../ops/outbox-browser.ts';
import { resetDemoData } from '../ops/reset.ts';
import { requireChaos, requireControl } from '../security/control.ts';
import { readSettings, writeSetting } from '../settings/settings.ts';
import type { StatsEngine } from '../stats/engine.ts';

export interface ControlDeps {
  pool: Pool;
  engine: StatsEngine;
  chaos: ChaosPanel;
  chaosEnabled: boolean;
  token: string | undefined;
  metrics: DashboardMetrics;
}

/**
 * The control endpoints: they change the running system, so each needs the token
 * when one is configured (and the failure points need CHAOS_ENABLED).
 */
export function controlRouter(deps: ControlDeps): Router {
  const router = Router();
  const control = requireControl(deps.token);
  const body = jsonBody({
    limit: '16kb',
    httpError: (status, message, issues) =>
      new HttpError(
        status,
        message,
        issues?.map(({ path, message }) => ({ path, message })),
      ),
    // One word for every refused body here, as zod's refusals say it (badRequest).
    invalidContent: 'invalid body',
    emptyBody: () => ({}),
  });
  const counted =
    (action: string): RequestHandler =>
    (_req, res, next) => {
      res.on('finish', () => deps.metrics.controlActions.inc({ action, status: res.statusCode }));
      next();
    };

  router.post(
    '/api/failure-points/:name',
    counted('arm'),
    control,
    requireChaos(deps.chaosEnabled),
    ...body,
    async (req, res) => {
      const name = parseOr400(failurePointNameSchema, req.params.name, 'failure point name');
      const request = parseOr400(armRequestSchema, req.body, 'body');
      res.json(await deps.chaos.arm(name, request));
    },
  );

  router.put('/api/mode', counted('mode'), control, ...body, async (req, res) => {
    const { mode } = parseOr400(modeRequestSchema, req.body, 'body');
    await writeSetting(deps.pool, 'order_mode', mode);
    res.json(await readSettings(deps.pool));
  });

  router.put('/api/traffic', counted('traffic'), control, ...body, async (req, res) => {
    const { rate } = parseOr400(trafficRequestSchema, req.body, 'body');
    await writeSetting(deps.pool, 'traffic_rate', rate);
    res.json(await readSettings(deps.pool));
  });

  // The relay's producer acks: '1' is unsafe on purpose (the 3-broker lesson). Not a
  // failure point: like the order mode it works with chaos off too.
  router.put('/api/acks', counted('acks'), control, ...body, async (req, res) => {
    const { acks } = parseOr400(acksRequestSchema, req.body, 'body');
    await writeRelayAcks(deps.pool, acks);
    res.json(await readSettings(deps.pool));
  });

  router.put('/api/relay', counted('relay'), control, ...body, async (req, res) => {
    const { relay } = parseOr400(relayRequestSchema, req.body, 'body');
    await requestRelay(deps.pool, relay);
    res.json(await readSettings(deps.pool));
  });

  router.post('/api/reset', counted('reset'), control, ...body, async (_req, res) => {
    await deps.engine.resetWith(() => resetDemoData(deps.pool));
    res.json({ ok: true, resetAt: new Date().toISOString() } satisfies ResetResponse);
  });

  router.post('/api/outbox/:id/requeue', counted('requeue'), control, ...body, async (req, res) => {
    const id = parseOr400(bigintId, req.params.id, 'outbox id');
    const found = await deps.pool.query<OutboxDbRow>(
      `SELECT ${outboxColumns} FROM outbox WHERE id = $1::bigint`,
      [id],
    );
    const row = found.rows[0];
    if (!row) throw new HttpError(404, `no outbox row ${id}`);
    if (row.sent_at) throw new HttpError(409, `outbox row ${id} was sent already`);
    const q = requeueQuery([id]);
    await deps.pool.query(q.text, q.values);
    const after = await deps.pool.query<OutboxDbRow>(
      `SELECT ${outboxColumns} FROM outbox WHERE id = $1::bigint`,
      [id],
    );
    const requeued = after.rows[0];
    if (!requeued) throw new HttpError(404, `no outbox row ${id}`);
    res.json({ row: toOutboxView(requeued) } satisfies RequeueResponse);
  });

  return router;
}
