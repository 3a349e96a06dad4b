import { crashNow, FailurePoint, type FailurePoints, type Logger } from '@outbox/core';
import type { EachMessagePayload, Producer, TopicPartitionOffsetAndMetadata } from 'kafkajs';
import type { Pool } from 'pg';
import { deadLetter } from './dead-letter.ts';
import { handleDelivery } from './handle-message.ts';
import { decodeMessage, PoisonMessageError, type DeadLetterReason } from './message.ts';
import type { ConsumerMetrics } from './metrics.ts';
import { isTransientDbError } from './transient.ts';

/**
 * Kafka's answers that mean "this member's place in the group is gone or moving": the
 * member must rejoin. kafkajs' runner rejoins when eachMessage throws one of these as
 * they are, but commitOffsets wraps them in a KafkaJSNonRetriableError, which the runner
 * turns into a crash it does not restart (issue 10: expelled during a long database
 * outage, the consumer stopped for good).
 */
const REJOIN_ERROR_TYPES: ReadonlySet<string> = new Set([
  'UNKNOWN_MEMBER_ID',
  'ILLEGAL_GENERATION',
  'REBALANCE_IN_PROGRESS',
  'NOT_COORDINATOR_FOR_GROUP',
]);

/** The group-membership error inside a kafkajs error chain, if there is one. */
export function rejoinCause(error: unknown): Error | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth += 1) {
    const err = e as { type?: unknown; cause?: unknown };
    if (typeof err.type === 'string' && REJOIN_ERROR_TYPES.has(err.type)) return e as Error;
    e = err.cause;
  }
  return undefined;
}

export interface OnMessageDeps {
  pool: Pool;
  /** Commits offsets through the kafkajs consumer currently running. */
  commitOffsets: (offsets: TopicPartitionOffsetAndMetadata[]) => Promise<void>;
  producer: Producer;
  failurePoints: FailurePoints;
  metrics: ConsumerMetrics;
  log: Logger;
  consumerName: string;
  dlqTopic: string;
}

/**
 * The eachMessage handler. Offsets are committed by hand (autoCommit off), after the
 * delivery's transaction committed: a crash in between (failure point 5) means Kafka
 * redelivers a message whose effect is already in PostgreSQL, and the inbox catches it.
 * A transient database error is thrown, so kafkajs retries the message; anything the
 * message is to blame for is dead-lettered, its offset committed, and consumption goes on.
 */
export function createOnMessage(
  deps: OnMessageDeps,
): (payload: EachMessagePayload) => Promise<void> {
  const { log, metrics } = deps;

  async function toDeadLetter(
    p: EachMessagePayload,
    reason: DeadLetterReason,
    detail: string,
  ): Promise<void> {
    await deadLetter(deps.pool, deps.producer, deps.dlqTopic, {
      consumer: deps.consumerName,
      topic: p.topic,
      partition: p.partition,
      message: p.message,
      reason,
      detail,
    });
    metrics.deadLettered.inc({ reason });
    log.warn(
      { topic: p.topic, partition: p.partition, offset: p.message.offset, reason, detail },
      'message dead-lettered',
    );
  }

  return async (p) => {
    const { topic, partition, message } = p;
    const where = { topic, partition, offset: message.offset };
    let decoded;
    try {
      decoded = decodeMessage(message);
    } catch (error) {
      const poison = error as PoisonMessageError;
      await toDeadLetter(p, poison.reason, poison.message);
    }
    if (decoded) {
      try {
        const inboxOff = deps.failurePoints.isActive(FailurePoint.consumerInboxOff);
        const handled = await handleDelivery(
          { pool: deps.pool, consumer: deps.consumerName, topic, partition, message, inboxOff },
          decoded,
        );
        metrics.count(handled.outcome, handled.fifoViolation);
        log.info(
          {
            ...where,
            eventId: decoded.eventId,
            eventType: decoded.eventType,
            aggregateId: decoded.aggregateId,
            seq: decoded.seq,
            outcome: handled.outcome,
            fifoViolation: handled.fifoViolation,
            inboxOff,
          },
          `event ${handled.outcome}`,
        );
      } catch (error) {
        if (isTransientDbError(error)) {
          metrics.transientErrors.inc();
          log.warn(
            { err: error, ...where, eventId: decoded.eventId },
            'transient database error; Kafka will redeliver',
          );
          throw error;
        }
        await toDeadLetter(
          p,
          'handler_error',
          error instanceof Error ? error.message : String(error),
        );
      }
      // Failure point 5: the effect is committed in PostgreSQL, the offset is not.
      if (await deps.failurePoints.fire(FailurePoint.consumerCrashBeforeOffsetCommit)) {
        await crashNow(
          log,
          { ...where, eventId: decoded.eventId },
          'consumer.crash_before_offset_commit: dying before committing the offset',
        );
      }
    }
    try {
      await deps.commitOffsets([
        { topic, partition, offset: (BigInt(message.offset) + 1n).toString() },
      ]);
    } catch (error) {
      // The effect is committed in PostgreSQL; after the rejoin Kafka redelivers the
      // message and the inbox catches it as a duplicate.
      const cause = rejoinCause(error);
      if (cause) {
        log.warn({ ...where, err: cause }, 'offset commit refused by the group; rejoining');
        throw cause;
      }
      throw error;
    }
  };
}
