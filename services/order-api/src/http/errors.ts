import type { ErrorRequestHandler, RequestHandler } from 'express';
import { type Logger } from '@outbox/core';
import { clientErrorOf } from '@outbox/lab';
import type { z } from 'zod';

/** An error that is the client's fault (or a known outcome): status + message, safe to show. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** zod issues as plain JSON (path, message, code): what a client needs to fix its request. */
export function zodDetails(error: z.ZodError): { path: string; message: string; code: string }[] {
  return error.issues.map((i) => ({
    path: i.path.map(String).join('.'),
    message: i.message,
    code: i.code,
  }));
}

/** The fallback route: an unknown path is a JSON 404 like every other error. */
export const notFound: RequestHandler = (req, _res, next) => {
  next(new HttpError(404, `no route for ${req.method} ${req.path}`));
};

/**
 * Maps every error to `{ error, details? }` JSON. Client errors say what was wrong;
 * anything unexpected is a bare 500 (logged with its stack, never sent: a stack
 * trace tells an attacker more than it tells a client).
 */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    if (res.headersSent) {
      // Too late for a JSON error: let express cut the connection.
      log.error({ err: error, path: req.path }, 'error after the response started');
      res.destroy();
      return;
    }
    if (error instanceof HttpError) {
      res
        .status(error.status)
        .json(
          error.details === undefined
            ? { error: error.message }
            : { error: error.message, details: error.details },
        );
      return;
    }
    // The framework's and core's errors that the request caused (body-parser, a URL
    // that does not decode, a payload the outbox cannot store): never a 500.
    const known = clientErrorOf(error);
    if (known) {
      res
        .status(known.status)
        .json(
          known.issues ? { error: known.message, details: known.issues } : { error: known.message },
        );
      return;
    }
    log.error({ err: error, method: req.method, path: req.path }, 'unhandled error');
    res.status(500).json({ error: 'internal error' });
  };
}
