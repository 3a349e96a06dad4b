import { crashNow, FailurePoint, type FailurePoints, type Logger } from '@outbox/core';
import type { Consumer, EachMessagePayload, Producer } from 'kafkajs';
import type { Pool } from 'pg';
import { deadLetter } from './dead-letter.ts';
import { handleDelivery } from './handle-message.ts';
import { decodeMessage, PoisonMessageError, type DeadLetterReason } from './message.ts';
import type { ConsumerMetrics } from './metrics.ts';
import { isTransientDbError } from './transient.ts';

export interface OnMessageDeps {
  pool: Pool;
  consumer: Consumer;
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
    await deps.consumer.commitOffsets([
      { topic, partition, offset: (BigInt(message.offset) + 1n).toString() },
    ]);
  };
}
