import { withTransaction, type Logger, type OutboxEvent, type OutboxWriter } from '@outbox/core';
import type { Pool, PoolClient } from 'pg';
import type { OrderMode } from '../config.ts';
import {
  claimIdempotencyKey,
  storeIdempotentResult,
  type HttpResult,
  type IdempotencyKey,
} from '../http/idempotency.ts';
import type { NaivePublisher, NaiveEvent } from './naive-publisher.ts';

/** What the order handlers share: the database, both ways out for events, logs. */
export interface OrderDeps {
  pool: Pool;
  writer: OutboxWriter;
  naive: NaivePublisher;
  log: Logger;
}

/** A business change made inside the transaction, and the event it produces. */
export interface Change {
  orderId: string;
  mode: OrderMode;
  event: OutboxEvent;
  status: number;
  /** Response body; `eventId` is added once the event has one. */
  body: Record<string, unknown>;
}

/** The outcome: the HTTP answer, and whether this call committed a change (not a replay). */
export interface Committed {
  result: HttpResult;
  committed: boolean;
}

/**
 * Runs `apply` and records its event, in one transaction that also claims and
 * stores the Idempotency-Key.
 *
 * - outbox: the event is appended to the outbox in the same transaction: both or
 *   neither (the relay publishes it later).
 * - naive: the order commits, then the event is produced (the dual write); if the
 *   produce fails the answer is 502 with the order committed, which is the lesson.
 */
export async function commitWithEvent(
  deps: OrderDeps,
  idem: IdempotencyKey | undefined,
  apply: (client: PoolClient) => Promise<Change>,
): Promise<Committed> {
  const done = await withTransaction(
    deps.pool,
    async (client): Promise<{ result: HttpResult; change?: Change; naive?: NaiveEvent }> => {
      const replay = await claimIdempotencyKey(client, idem);
      if (replay) return { result: replay };
      const change = await apply(client);
      let eventId: string;
      let naive: NaiveEvent | undefined;
      if (change.mode === 'outbox') {
        eventId = (await deps.writer.append(client, change.event)).id;
      } else {
        naive = deps.naive.prepare(change.event);
        eventId = naive.id;
        await deps.naive.beforeCommit(naive);
      }
      const result: HttpResult = { status: change.status, body: { ...change.body, eventId } };
      await storeIdempotentResult(client, idem, result);
      return { result, change, naive };
    },
  );
  if (!done.change) return { result: done.result, committed: false };
  if (!done.naive || (await deps.naive.afterCommit(done.naive))) {
    return { result: done.result, committed: true };
  }
  // The order is committed and its event is lost: say so, and replay that answer
  // to a retry too (retrying the request would not bring the event back).
  const failed: HttpResult = {
    status: 502,
    body: { error: 'event not published', orderId: done.change.orderId },
  };
  await storeIdempotentResult(deps.pool, idem, failed).catch((error: unknown) =>
    deps.log.error({ err: error }, 'could not store the 502 for the Idempotency-Key'),
  );
  return { result: failed, committed: true };
}
