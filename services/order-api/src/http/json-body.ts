import express, { type RequestHandler } from 'express';
import { HttpError } from './errors.ts';

const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * A route's body parsing: 415 for a body that is not JSON, then express.json with
 * the size limit (413) and strict parsing (400 for malformed JSON). A POST without
 * a body (Content-Length: 0, as fetch sends for `/pay`) passes with no body.
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
  return [requireJson, express.json({ limit, strict: true, type: JSON_TYPES })];
}
