import { crashNow, type Logger, withTransaction } from '@outbox/core';
import { FailurePoint, type FailurePointGate } from '@outbox/lab';
import type {
  EachBatchPayload,
  KafkaMessage,
  Producer,
  TopicPartitionOffsetAndMetadata,
} from 'kafkajs';
import type { Pool } from 'pg';
import { deadLetter } from './dead-letter.ts';
import { EffectError, handleDeliveries, type HandledDelivery } from './handle-deliveries.ts';
import {
  decodeMessage,
  PoisonMessageError,
  type DeadLetterReason,
  type DecodedEvent,
} from './message.ts';
import type { ConsumerMetrics } from './metrics.ts';
import { ChunkSpans } from './tracing.ts';
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
export function rejoinCause(error: unknown): (Error & { type: string }) | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth += 1) {
    const err = e as { type?: unknown; cause?: unknown };
    if (typeof err.type === 'string' && REJOIN_ERROR_TYPES.has(err.type))
      return e as Error & { type: string };
    e = err.cause;
  }
  return undefined;
}

export interface OnBatchDeps {
  pool: Pool;
  /** Commits offsets through the kafkajs consumer currently running. */
  commitOffsets: (offsets: TopicPartitionOffsetAndMetadata[]) => Promise<void>;
  producer: Producer;
  failurePoints: FailurePointGate;
  metrics: ConsumerMetrics;
  log: Logger;
  consumerName: string;
  dlqTopic: string;
  /** Messages applied in one transaction, and covered by one offset commit (CONSUMER_BATCH_MAX). */
  chunkSize: number;
}

/** One message of a chunk, decoded or not. */
interface Delivery {
  message: KafkaMessage;
  decoded?: DecodedEvent;
  /** Why it goes to the dead-letter topic instead (unreadable, or its handler threw). */
  deadLetter?: { reason: DeadLetterReason; detail: string };
}

/** A delivery applied in a chunk, and how. */
interface Applied {
  delivery: Delivery;
  handled: HandledDelivery;
  inboxOff: boolean;
}

const errorText = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

/**
 * The eachBatch handler. A fetched batch of one partition is applied in chunks of
 * `chunkSize` messages, in offset order: one PostgreSQL transaction per chunk (the
 * inbox markers, the effects and the delivery rows of all its messages), then the
 * chunk's dead letters, then one offset commit. One transaction and one commit per
 * message held the consumer to ~300 events/s on a quiet machine and ~156/s in the
 * soak, under the ~170/s of 100 orders/s (npm run bench -- --only consumer compares
 * the two side by side).
 *
 * Offsets are committed by hand (autoCommit off), after the chunk's transaction
 * committed: a crash in between (failure point 5) means Kafka redelivers messages whose
 * effects are already in PostgreSQL, and the inbox catches them. A transient database
 * error rolls the chunk back and is thrown, so kafkajs fetches it again from its first
 * message. A message that is to blame (unreadable, or its handler threw) is taken out
 * of the chunk, which is applied again without it, and dead-lettered; consumption goes on.
 * Between chunks the handler stops if the consumer is stopping or the batch went stale
 * (a rebalance), so a shutdown waits for one chunk, not for the whole batch.
 */
export function createOnBatch(deps: OnBatchDeps): (payload: EachBatchPayload) => Promise<void> {
  const { log, metrics } = deps;

  async function toDeadLetter(topic: string, partition: number, d: Delivery): Promise<void> {
    const { reason, detail } = d.deadLetter!;
    await deadLetter(deps.pool, deps.producer, deps.dlqTopic, {
      consumer: deps.consumerName,
      topic,
      partition,
      message: d.message,
      reason,
      detail,
    });
    metrics.deadLettered.inc({ reason });
    log.warn(
      { topic, partition, offset: d.message.offset, reason, detail },
      'message dead-lettered',
    );
  }

  /**
   * Applies the chunk's readable deliveries in one transaction (handleDeliveries). An
   * effect that throws names its message: that one is marked for the dead-letter topic
   * and the rest applied again without it. A chunk-wide statement that fails for a reason
   * that is not transient names none: each delivery is then applied in a transaction of
   * its own, which finds it. A transient error is thrown: Kafka redelivers the chunk.
   */
  async function apply(
    topic: string,
    partition: number,
    chunk: Delivery[],
    spans: ChunkSpans,
  ): Promise<Applied[]> {
    for (;;) {
      const live = chunk.filter((d) => d.decoded && !d.deadLetter);
      if (live.length === 0) return [];
      const inboxOff = deps.failurePoints.isActive(FailurePoint.consumerInboxOff);
      try {
        const handled = await withTransaction(deps.pool, (client) =>
          handleDeliveries(
            client,
            { consumer: deps.consumerName, topic, partition, inboxOff },
            live.map((d) => ({
              message: d.message,
              decoded: d.decoded!,
              traceContext: spans.contextOf(d.message),
            })),
          ),
        );
        return live.map((delivery, i) => ({ delivery, handled: handled[i]!, inboxOff }));
      } catch (error) {
        if (isTransientDbError(error)) throw error;
        const blamed = error instanceof EffectError ? live[error.index] : live[0];
        if (error instanceof EffectError || live.length === 1) {
          blamed!.deadLetter = { reason: 'handler_error', detail: errorText(error) };
          continue;
        }
        log.warn(
          { err: error, topic, partition, offset: live[0]!.message.offset, messages: live.length },
          'a statement of the whole chunk failed; applying its messages one by one',
        );
        const applied: Applied[] = [];
        for (const delivery of live)
          applied.push(...(await apply(topic, partition, [delivery], spans)));
        return applied;
      }
    }
  }

  async function handleChunk(topic: string, partition: number, messages: KafkaMessage[]) {
    const chunk: Delivery[] = messages.map((message) => {
      try {
        return { message, decoded: decodeMessage(message) };
      } catch (error) {
        const poison = error as PoisonMessageError;
        return { message, deadLetter: { reason: poison.reason, detail: poison.message } };
      }
    });
    const spans = new ChunkSpans(topic, partition, messages);
    let applied;
    try {
      applied = await apply(topic, partition, chunk, spans);
    } catch (error) {
      spans.failed(error);
      if (isTransientDbError(error)) {
        metrics.transientErrors.inc();
        log.warn(
          { err: error, topic, partition, offset: messages[0]!.offset, messages: messages.length },
          'transient database error; Kafka will redeliver',
        );
      }
      throw error;
    }
    for (const { delivery, handled, inboxOff } of applied) {
      const decoded = delivery.decoded!;
      metrics.count(handled.outcome, handled.fifoViolation);
      spans.applied(delivery.message, decoded.eventId, handled.outcome);
      log.info(
        {
          topic,
          partition,
          offset: delivery.message.offset,
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
    }
    try {
      for (const delivery of chunk)
        if (delivery.deadLetter) {
          spans.deadLettered(
            delivery.message,
            delivery.deadLetter.reason,
            delivery.deadLetter.detail,
          );
          await toDeadLetter(topic, partition, delivery);
        }
    } finally {
      spans.end();
    }
    return applied.length > 0;
  }

  return async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
    const { topic, partition } = batch;
    for (let from = 0; from < batch.messages.length; from += deps.chunkSize) {
      if (!isRunning() || isStale()) return;
      const messages = batch.messages.slice(from, from + deps.chunkSize);
      const last = messages[messages.length - 1]!.offset;
      const appliedAny = await handleChunk(topic, partition, messages);
      // Failure point 5: the effects are committed in PostgreSQL, the offset is not.
      if (
        appliedAny &&
        (await deps.failurePoints.fire(FailurePoint.consumerCrashBeforeOffsetCommit))
      ) {
        await crashNow(
          log,
          { topic, partition, offset: last },
          'consumer.crash_before_offset_commit: dying before committing the offset',
        );
      }
      try {
        await deps.commitOffsets([{ topic, partition, offset: (BigInt(last) + 1n).toString() }]);
      } catch (error) {
        // The effects are committed in PostgreSQL; after the rejoin Kafka redelivers the
        // chunk and the inbox catches it as duplicates.
        const cause = rejoinCause(error);
        if (cause) {
          log.warn(
            { topic, partition, offset: last, err: cause },
            'offset commit refused by the group; rejoining',
          );
          throw cause;
        }
        throw error;
      }
      resolveOffset(last);
      await heartbeat();
    }
  };
}
