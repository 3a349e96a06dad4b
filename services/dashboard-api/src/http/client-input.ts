import { clientText } from '@outbox/lab';
import { z } from 'zod';
import { outboxQuerySchema } from '../contract.ts';

const BIGINT_MAX = 9_223_372_036_854_775_807n;

/**
 * A BIGINT id as the client writes it (path segment, cursor). Past 2^63-1 the
 * `::bigint` cast fails in PostgreSQL (22003), which would be a 500.
 */
export const bigintId = z
  .string()
  .regex(/^\d{1,19}$/, 'an outbox id is a positive integer')
  // zod runs a refinement after a failed regex too: BigInt('abc') would throw.
  .refine((s) => !/^\d+$/.test(s) || BigInt(s) <= BIGINT_MAX, 'an outbox id is at most 2^63-1');

/**
 * GET /api/outbox's query as the server reads it: the contract's shape (which imports
 * only zod, for the browser) with the lab's clientText rule on the text filters — no
 * NUL (22021, a 500), no unpaired surrogate, no control character — and a cursor
 * that fits a BIGINT.
 */
export const outboxQuery = outboxQuerySchema.extend({
  aggregateId: clientText({ max: 200 }).optional(),
  eventType: clientText({ max: 200 }).optional(),
  cursor: bigintId.optional(),
});
