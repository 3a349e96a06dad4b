import { createHash } from 'node:crypto';
import type { Request } from 'express';
import type { ClientBase, Pool } from 'pg';
import { HttpError } from './errors.ts';

/** A handler's answer: what the route sends, and what an Idempotency-Key replays. */
export interface HttpResult {
  status: number;
  body: Record<string, unknown>;
  /** Set when the answer is a stored one replayed for a retry. */
  replayed?: boolean;
}

/** The request's Idempotency-Key and the hash of what it asked for. */
export interface IdempotencyKey {
  key: string;
  requestHash: string;
}

// Printable ASCII, as the IETF draft's examples; long enough for a UUID or a ULID.
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * Reads the Idempotency-Key header (undefined when absent). The hash covers method,
 * URL (path and query: `?mode=` changes the meaning) and the parsed body, so a
 * retry is recognised and a different request reusing a key is refused.
 */
export function readIdempotencyKey(req: Request): IdempotencyKey | undefined {
  const key = req.get('idempotency-key');
  if (key === undefined) return undefined;
  if (!KEY_PATTERN.test(key)) {
    throw new HttpError(400, 'Idempotency-Key must be 1-255 printable ASCII characters');
  }
  const requestHash = createHash('sha256')
    .update(`${req.method} ${req.originalUrl}\n${JSON.stringify(req.body ?? null)}`)
    .digest('hex');
  return { key, requestHash };
}

interface Row {
  request_hash: string;
  status_code: number;
  response: Record<string, unknown>;
}

/**
 * First statement of the request's transaction: inserts the key with a placeholder
 * response. The primary key serialises concurrent retries: a second transaction
 * with the same key waits on the first one's uncommitted row, and once that commits
 * its INSERT does nothing and it reads the stored response (READ COMMITTED takes a
 * new snapshot per statement). If the first one rolls back, the second proceeds as
 * the first. Returns the stored answer to replay, or undefined to go ahead.
 */
export async function claimIdempotencyKey(
  client: ClientBase,
  idem: IdempotencyKey | undefined,
): Promise<HttpResult | undefined> {
  if (!idem) return undefined;
  const inserted = await client.query(
    `INSERT INTO idempotency_keys (key, request_hash, status_code, response)
     VALUES ($1, $2, 0, '{}'::jsonb) ON CONFLICT (key) DO NOTHING`,
    [idem.key, idem.requestHash],
  );
  if (inserted.rowCount === 1) return undefined;
  const { rows } = await client.query<Row>(
    'SELECT request_hash, status_code, response FROM idempotency_keys WHERE key = $1',
    [idem.key],
  );
  const row = rows[0];
  // Deleted between the two statements (an operator's cleanup): treat as a conflict.
  if (!row || row.status_code === 0) {
    throw new HttpError(409, 'a request with this Idempotency-Key is in progress; retry later');
  }
  if (row.request_hash !== idem.requestHash) {
    throw new HttpError(422, 'Idempotency-Key was already used with a different request');
  }
  return { status: row.status_code, body: row.response, replayed: true };
}

/** Stores the answer for the key, in the transaction that claimed it (or after, for naive). */
export async function storeIdempotentResult(
  client: ClientBase | Pool,
  idem: IdempotencyKey | undefined,
  result: HttpResult,
): Promise<void> {
  if (!idem) return;
  await client.query(
    'UPDATE idempotency_keys SET status_code = $2, response = $3::jsonb WHERE key = $1',
    [idem.key, result.status, JSON.stringify(result.body)],
  );
}
