import type { ErrorRequestHandler, RequestHandler } from 'express';
import { type Logger } from '@outbox/core';
import { clientErrorOf } from '@outbox/lab';
import type { z } from 'zod';
import type { ApiError } from '../contract.ts';

/** An error that is the client's fault (or a known outcome): status + message, safe to show. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly issues?: ApiError['issues'],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** A 400 naming every field zod refused. */
export function badRequest(what: string, error: z.ZodError): HttpError {
  return new HttpError(
    400,
    `invalid ${what}`,
    error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
  );
}

/** Parses `value` with `schema`, or throws the 400. */
export function parseOr400<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what: string,
): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(what, result.error);
  return result.data;
}

/** Unknown API paths are JSON 404s like every other error. */
export const notFound: RequestHandler = (req, _res, next) => {
  next(new HttpError(404, `no route for ${req.method} ${req.originalUrl.split('?')[0]}`));
};

/**
 * Maps every error to `{ error, issues? }` JSON. Anything unexpected is a bare 500,
 * logged with its stack and never sent.
 */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    if (res.headersSent) {
      log.error({ err: error, path: req.path }, 'error after the response started');
      res.destroy();
      return;
    }
    if (error instanceof HttpError) {
      res.set(error.headers);
      const body: ApiError = { error: error.message };
      if (error.issues) body.issues = error.issues;
      res.status(error.status).json(body);
      return;
    }
    // The framework's and core's errors that the request caused (body-parser, a URL
    // that does not decode): never a 500.
    const known = clientErrorOf(error);
    if (known) {
      const body: ApiError = { error: known.message };
      if (known.issues) body.issues = known.issues.map(({ path, message }) => ({ path, message }));
      res.status(known.status).json(body);
      return;
    }
    log.error({ err: error, method: req.method, path: req.path }, 'unhandled error');
    res.status(500).json({ error: 'internal error' } satisfies ApiError);
  };
}
