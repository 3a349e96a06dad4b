import { byteSize, ClientJsonError, parseClientJson } from '@outbox/lab';
import express, { type RequestHandler } from 'express';
import { HttpError } from './errors.ts';

const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * A route's body parsing: 415 for a body that is not JSON (a cross-site form post
 * cannot send application/json without a CORS preflight), the size limit (413), then
 * the lab's parseClientJson: UTF-8 only (415 for another charset), and 400 naming the
 * problem for malformed JSON, duplicate keys, deep nesting, NUL or unpaired
 * surrogates and numbers past 2^53. A POST without a body passes with {}.
 */
export function jsonBody(limit: string): RequestHandler[] {
  const maxBytes = byteSize(limit);
  if (maxBytes === undefined) throw new Error(`body limit "${limit}" is not a size like 16kb`);
  const requireJson: RequestHandler = (req, res, next) => {
    const length = req.get('content-length');
    const hasBody =
      req.get('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
    if (hasBody && !req.is(JSON_TYPES)) {
      next(new HttpError(415, 'Content-Type must be application/json'));
      return;
    }
    // body-parser would read (and drop) a declared 10 GB before it answers 413: answer
    // now, and close the connection rather than read the body.
    if (length !== undefined && Number(length) > maxBytes) {
      res.set('Connection', 'close');
      next(new HttpError(413, 'request body too large'));
      return;
    }
    next();
  };
  const parse: RequestHandler = (req, _res, next) => {
    if (!Buffer.isBuffer(req.body)) {
      req.body ??= {};
      next();
      return;
    }
    try {
      req.body = parseClientJson(req.body, { contentType: req.get('content-type') });
      next();
    } catch (error) {
      if (!(error instanceof ClientJsonError)) throw error;
      const status = error.kind === 'charset' ? 415 : 400;
      const message = error.kind === 'content' ? 'invalid body' : error.message;
      const issues = error.issues.map(({ path, message }) => ({ path, message }));
      next(new HttpError(status, message, issues.length > 0 ? issues : undefined));
    }
  };
  return [requireJson, express.raw({ limit: maxBytes, type: JSON_TYPES }), parse];
}
