import { claimInbox } from '@outbox/core';
import type { Context } from '@opentelemetry/api';
import type { KafkaMessage } from 'kafkajs';
import type { ClientBase } from 'pg';
import { appliedBefore, recordDeliveries, type DeliveryOutcome } from './deliveries.ts';
import { applyEffect } from './effects.ts';
import type { DecodedEvent } from './message.ts';
import { inEffectSpan } from './tracing.ts';
import { isTransientDbError } from './transient.ts';

export interface HandledDelivery {
  outcome: DeliveryOutcome;
  fifoViolation: boolean;
}

/** Where a chunk of messages comes from, and the switches read for it. */
export interface ChunkContext {
  consumer: string;
  topic: string;
  partition: number;
  /** The `consumer.inbox_off` switch, read once for the chunk. */
  inboxOff: boolean;
}

export interface ChunkDelivery {
  message: KafkaMessage;
  decoded: DecodedEvent;
  /** The message's span: parent of its inbox check and its effect. */
  traceContext?: Context;
}

/** The span of an event's effect on stock; none for events that do not move stock. */
const EFFECT_SPANS: Partial<Record<string, string>> = {
  OrderCreated: 'inventory.reserve',
  OrderCancelled: 'inventory.release',
};

/** The effect of one delivery threw, and not for a transient reason: that message is to blame. */
export class EffectError extends Error {
  constructor(
    readonly index: number,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'EffectError';
  }
}

/**
 * A chunk of deliveries of one partition, in offset order, inside the caller's
 * transaction: the inbox markers, the effects on the inventory and the
 * consumer_deliveries rows commit together or not at all.
 *
 * With the inbox on, a redelivery is caught by the inbox (claimInbox) and only recorded
 * as 'duplicate'. With it off (the lesson), the effect runs again and the delivery is
 * recorded as 'reprocessed'.
 *
 * What can be written for the whole chunk at once is (the inbox markers, the FIFO check,
 * the delivery rows: one statement each); only the effects go one statement per
 * message, because each one reads the stock the one before it left. At ~8 statements per
 * message, one round trip each, the consumer could not drain the soak's backlog through
 * its slowed PostgreSQL link (issue 10). A failing effect names its message
 * (EffectError); a failing chunk-wide statement does not, and the caller must find it.
 */
export async function handleDeliveries(
  client: ClientBase,
  ctx: ChunkContext,
  deliveries: readonly ChunkDelivery[],
): Promise<HandledDelivery[]> {
  const { consumer, topic, partition } = ctx;
  const markers = deliveries.map(({ decoded, message, traceContext }) => ({
    consumer,
    eventId: decoded.eventId,
    topic,
    partition,
    offset: message.offset,
    ...(traceContext ? { traceContext } : {}),
  }));
  let outcomes: DeliveryOutcome[];
  if (!ctx.inboxOff) {
    const fresh = await claimInbox(client, markers);
    outcomes = fresh.map((isNew) => (isNew ? 'processed' : 'duplicate'));
  } else {
    const before = await appliedBefore(
      client,
      consumer,
      deliveries.map((d) => d.decoded.eventId),
    );
    outcomes = deliveries.map(({ decoded }) => {
      const again = before.has(decoded.eventId);
      before.add(decoded.eventId);
      return again ? 'reprocessed' : 'processed';
    });
    // Keep the markers written, so that switching the inbox back on still recognises
    // every event applied while it was off.
    await claimInbox(client, markers);
  }

  for (const [index, { decoded, traceContext }] of deliveries.entries()) {
    if (outcomes[index] === 'duplicate') continue;
    try {
      await inEffectSpan(
        EFFECT_SPANS[decoded.event.eventType],
        traceContext,
        { 'outbox.event_id': decoded.eventId, 'outbox.aggregate_id': decoded.aggregateId },
        () => applyEffect(client, decoded.event, decoded.eventId),
      );
    } catch (error) {
      if (isTransientDbError(error)) throw error;
      throw new EffectError(index, error);
    }
  }

  const fifoViolations = await recordDeliveries(
    client,
    deliveries.map(({ decoded, message }, index) => ({
      consumer,
      eventId: decoded.eventId,
      eventType: decoded.eventType,
      aggregateId: decoded.aggregateId,
      seq: decoded.seq,
      topic,
      partition,
      offset: message.offset,
      outcome: outcomes[index]!,
    })),
  );
  return outcomes.map((outcome, index) => ({
    outcome,
    fifoViolation: fifoViolations[index]!,
  }));
}
