import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { HttpError } from '../http/errors.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Control endpoints (failure points, mode, traffic, reset, requeue) change the
 * running system. With a CONTROL_TOKEN configured they need `Authorization: Bearer
 * <token>`; without one the server only starts on loopback (config.ts), so only this
 * machine reaches them. Compared as digests in constant time.
 */
export function requireControl(token: string | undefined): RequestHandler {
  const expected = token === undefined ? undefined : digest(token);
  return (req, _res, next) => {
    if (!expected) {
      next();
      return;
    }
    const header = req.get('authorization') ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match?.[1] || !timingSafeEqual(digest(match[1].trim()), expected)) {
      next(
        new HttpError(
          401,
          'control endpoints need Authorization: Bearer <CONTROL_TOKEN>',
          undefined,
          { 'WWW-Authenticate': 'Bearer realm="outbox-lab dashboard"' },
        ),
      );
      return;
    }
    next();
  };
}

/** CHAOS_ENABLED=false turns the failure points off entirely: 403, and the reason. */
export function requireChaos(enabled: boolean): RequestHandler {
  return (_req, _res, next) => {
    next(
      enabled
        ? undefined
        : new HttpError(403, 'chaos is disabled on this server (CHAOS_ENABLED=false)'),
    );
  };
}
