import express, { type RequestHandler } from 'express';
import { HttpError } from './errors.ts';

const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * A route's body parsing: 415 for a body that is not JSON (a cross-site form post
 * cannot send application/json without a CORS preflight), then express.json with the
 * size limit (413) and strict parsing (400). A POST without a body passes with {}.
 */
export function jsonBody(limit: string): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    const length = req.get('content-length');
    const hasBody =
      req.get('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
    if (hasBody && !req.is(JSON_TYPES)) {
      next(new HttpError(415, 'Content-Type must be application/json'));
      return;
    }
    next();
  };
  const emptyToObject: RequestHandler = (req, _res, next) => {
    req.body ??= {};
    next();
  };
  return [requireJson, express.json({ limit, strict: true, type: JSON_TYPES }), emptyToObject];
}
