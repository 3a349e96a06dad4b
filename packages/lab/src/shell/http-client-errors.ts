import { STATUS_CODES } from 'node:http';
import { PayloadNotSerializableError, PayloadTooLargeError } from '@outbox/core';
import type { ClientInputIssue } from './client-json.ts';

/** A client error as an HTTP API answers it. */
export interface ClientErrorAnswer {
  status: number;
  message: string;
  issues?: ClientInputIssue[];
}

// body-parser's error types (it sets `type` and `status` on what it throws).
const bodyParserErrors: Record<string, ClientErrorAnswer> = {
  'entity.parse.failed': { status: 400, message: 'malformed JSON body' },
  'entity.too.large': { status: 413, message: 'request body too large' },
  'encoding.unsupported': { status: 415, message: 'unsupported content encoding' },
  'charset.unsupported': { status: 415, message: 'unsupported charset' },
  'request.aborted': { status: 400, message: 'request aborted' },
  'request.size.invalid': { status: 400, message: 'request size did not match content-length' },
};

/**
 * The answer for an error that the request caused, thrown by the framework or by
 * core rather than by a route's own validation; undefined for anything else (a 500).
 * - body-parser's errors, by type;
 * - a body whose Content-Encoding does not match its bytes (zlib's Z_* errors, which
 *   body-parser passes on with status 400 but no type);
 * - a URL with malformed percent-encoding (express: URIError, status 400);
 * - the outbox writer's PayloadNotSerializableError / PayloadTooLargeError: the
 *   payload is built from the request, so it is the request that cannot be stored;
 * - any other error the framework marked as the client's (a 4xx `status`).
 */
export function clientErrorOf(error: unknown): ClientErrorAnswer | undefined {
  if (error instanceof PayloadNotSerializableError) {
    return {
      status: 400,
      message: 'invalid request body',
      issues: [{ path: '', message: error.message, code: 'not_serializable' }],
    };
  }
  if (error instanceof PayloadTooLargeError) return { status: 413, message: error.message };
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, status, code } = error as { type?: unknown; status?: unknown; code?: unknown };
  const known = typeof type === 'string' ? bodyParserErrors[type] : undefined;
  if (known) return known;
  if (typeof status !== 'number' || status < 400 || status > 499) return undefined;
  if (typeof code === 'string' && code.startsWith('Z_')) {
    return { status: 400, message: 'request body could not be decompressed (Content-Encoding)' };
  }
  if (error instanceof URIError) {
    return { status: 400, message: 'malformed percent-encoding in the URL' };
  }
  return { status, message: (STATUS_CODES[status] ?? 'bad request').toLowerCase() };
}
