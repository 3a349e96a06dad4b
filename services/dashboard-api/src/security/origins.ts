import type { IncomingMessage } from 'node:http';
import cors from 'cors';
import type { RequestHandler } from 'express';
import { HttpError } from '../http/errors.ts';

/**
 * The browser origins allowed to call the API and open the socket. A request with no
 * Origin header is not from a browser page of another site (curl, the e2e runner, a
 * same-origin GET) and passes; one from any other origin is refused outright, not
 * just left without CORS headers: a cross-site form POST needs no preflight, and a
 * WebSocket is not covered by CORS at all.
 *
 * `origins` is read on every request: the defaults depend on the port, known only
 * once the server listens.
 */
export class OriginPolicy {
  constructor(private origins: readonly string[]) {}

  set(origins: readonly string[]): void {
    this.origins = origins;
  }

  get list(): readonly string[] {
    return this.origins;
  }

  allows(origin: string | undefined): boolean {
    return origin === undefined || this.origins.includes(origin.replace(/\/$/, ''));
  }

  /** express: 403 for a foreign Origin, CORS headers (and preflight answers) for ours. */
  middleware(): RequestHandler[] {
    const refuse: RequestHandler = (req, _res, next) => {
      const origin = req.get('origin');
      next(this.allows(origin) ? undefined : new HttpError(403, `origin ${origin} is not allowed`));
    };
    const headers = cors({
      origin: (origin, callback) => callback(null, this.allows(origin)),
      methods: ['GET', 'POST', 'PUT'],
      allowedHeaders: ['Content-Type', 'Authorization'],
      maxAge: 600,
    });
    return [refuse, headers];
  }

  /** socket.io's allowRequest: the same rule for the handshake. */
  allowRequest = (req: IncomingMessage, callback: (err: string | null, ok: boolean) => void) => {
    const origin = req.headers.origin;
    const ok = this.allows(origin);
    callback(ok ? null : `origin ${origin} is not allowed`, ok);
  };
}
