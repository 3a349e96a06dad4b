import express, { type RequestHandler } from 'express';
import {
  byteSize,
  ClientJsonError,
  parseClientJson,
  type ClientInputIssue,
} from './client-json.ts';

const JSON_TYPES = ['application/json', 'application/*+json'];

export interface JsonBodyOptions {
  /** The largest body, as a size like '16kb'. */
  limit: string;
  /** The service's own client error: what its error handler turns into JSON. */
  httpError: (status: number, message: string, issues?: ClientInputIssue[]) => Error;
  /** The message for a body that parses but breaks a content rule (default: parseClientJson's). */
  invalidContent?: string;
  /** What req.body is for a request without a body (default: left as express has it). */
  emptyBody?: () => unknown;
}

/**
 * A route's body parsing, the one rule every JSON body of the lab passes: 415 for a
 * body that is not JSON (a cross-site form post cannot send application/json without a
 * CORS preflight), the size limit (413), then parseClientJson: UTF-8 only (415 for
 * another charset), and 400 naming the problem for malformed JSON, duplicate keys, deep
 * nesting, NUL or unpaired surrogates and numbers past 2^53. A POST without a body
 * (Content-Length: 0, as fetch sends for order-api's `/pay`) passes.
 */
export function jsonBody(options: JsonBodyOptions): RequestHandler[] {
  const { limit, httpError } = options;
  const maxBytes = byteSize(limit);
  if (maxBytes === undefined) throw new Error(`body limit "${limit}" is not a size like 16kb`);
  const requireJson: RequestHandler = (req, res, next) => {
    const length = req.get('content-length');
    const hasBody =
      req.get('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
    if (hasBody && !req.is(JSON_TYPES)) {
      next(httpError(415, 'Content-Type must be application/json'));
      return;
    }
    // body-parser would read (and drop) a declared 10 GB before it answers 413: answer
    // now, and close the connection rather than read the body.
    if (length !== undefined && Number(length) > maxBytes) {
      res.set('Connection', 'close');
      next(httpError(413, 'request body too large'));
      return;
    }
    next();
  };
  const parse: RequestHandler = (req, _res, next) => {
    if (!Buffer.isBuffer(req.body)) {
      if (options.emptyBody) req.body ??= options.emptyBody();
      next();
      return;
    }
    try {
      req.body = parseClientJson(req.body, { contentType: req.get('content-type') });
      next();
    } catch (error) {
      if (!(error instanceof ClientJsonError)) throw error;
      const status = error.kind === 'charset' ? 415 : 400;
      const message =
        error.kind === 'content' ? (options.invalidContent ?? error.message) : error.message;
      next(httpError(status, message, error.issues.length > 0 ? error.issues : undefined));
    }
  };
  return [requireJson, express.raw({ limit: maxBytes, type: JSON_TYPES }), parse];
}
