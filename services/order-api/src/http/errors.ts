import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '@outbox/core';
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

// body-parser's error types (it sets `type` and `status` on what it throws).
const bodyParserErrors: Record<string, { status: number; message: string }> = {
  'entity.parse.failed': { status: 400, message: 'malformed JSON body' },
  'entity.too.large': { status: 413, message: 'request body too large' },
  'encoding.unsupported': { status: 415, message: 'unsupported content encoding' },
  'charset.unsupported': { status: 415, message: 'unsupported charset' },
  'request.aborted': { status: 400, message: 'request aborted' },
  'request.size.invalid': { status: 400, message: 'request size did not match content-length' },
};

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
    const type = (error as { type?: unknown } | null)?.type;
    const known = typeof type === 'string' ? bodyParserErrors[type] : undefined;
    if (known) {
      res.status(known.status).json({ error: known.message });
      return;
    }
    log.error({ err: error, method: req.method, path: req.path }, 'unhandled error');
    res.status(500).json({ error: 'internal error' });
  };
}
