import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '@outbox/core';
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

// body-parser's error types (it sets `type` and `status` on what it throws).
const bodyParserErrors: Record<string, { status: number; message: string }> = {
  'entity.parse.failed': { status: 400, message: 'malformed JSON body' },
  'entity.too.large': { status: 413, message: 'request body too large' },
  'encoding.unsupported': { status: 415, message: 'unsupported content encoding' },
  'charset.unsupported': { status: 415, message: 'unsupported charset' },
};

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
    const type = (error as { type?: unknown } | null)?.type;
    const known = typeof type === 'string' ? bodyParserErrors[type] : undefined;
    if (known) {
      res.status(known.status).json({ error: known.message } satisfies ApiError);
      return;
    }
    log.error({ err: error, method: req.method, path: req.path }, 'unhandled error');
    res.status(500).json({ error: 'internal error' } satisfies ApiError);
  };
}
