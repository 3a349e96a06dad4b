import { handleOnce } from '@outbox/core';
import type { KafkaMessage } from 'kafkajs';
import type { ClientBase } from 'pg';
import { appliedBefore, recordDelivery, type DeliveryOutcome } from './deliveries.ts';
import { applyEffect } from './effects.ts';
import type { DecodedEvent } from './message.ts';

export interface HandledDelivery {
  outcome: DeliveryOutcome;
  fifoViolation: boolean;
}

export interface DeliveryContext {
  consumer: string;
  topic: string;
  partition: number;
  message: KafkaMessage;
  /** The `consumer.inbox_off` switch, read at this delivery. */
  inboxOff: boolean;
}

/**
 * One delivery, inside the caller's transaction: the inbox marker, the effect on the
 * inventory and the consumer_deliveries row commit together or not at all. With the
 * inbox on, a redelivery is caught by handleOnce and only recorded as 'duplicate'. With
 * it off (the lesson), the effect runs again and the delivery is recorded as 'reprocessed'.
 */
export async function handleDelivery(
  client: ClientBase,
  ctx: DeliveryContext,
  decoded: DecodedEvent,
): Promise<HandledDelivery> {
  const { consumer, topic, partition, message } = ctx;
  const delivery = { consumer, eventId: decoded.eventId, topic, partition, offset: message.offset };
  let outcome: DeliveryOutcome;
  if (!ctx.inboxOff) {
    const result = await handleOnce(client, delivery, (tx) =>
      applyEffect(tx, decoded.event, decoded.eventId),
    );
    outcome = result.status;
  } else {
    const again = await appliedBefore(client, consumer, decoded.eventId);
    await applyEffect(client, decoded.event, decoded.eventId);
    // Keep the marker written, so that switching the inbox back on still recognises
    // every event applied while it was off.
    await client.query(
      `INSERT INTO inbox (consumer, event_id, topic, kafka_partition, kafka_offset)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (consumer, event_id) DO NOTHING`,
      [consumer, decoded.eventId, topic, partition, message.offset],
    );
    outcome = again ? 'reprocessed' : 'processed';
  }
  const fifoViolation = await recordDelivery(client, {
    consumer,
    eventId: decoded.eventId,
    eventType: decoded.eventType,
    aggregateId: decoded.aggregateId,
    seq: decoded.seq,
    topic,
    partition,
    offset: message.offset,
    outcome,
  });
  return { outcome, fifoViolation };
}
