import type { Message, Producer, ProducerBatch, RecordMetadata } from 'kafkajs';
import { OutboxError, ProducerRenewalRequiredError } from '../errors.ts';
import { assignedPartition, checkAcknowledged } from './acknowledgement.ts';
import { isRowError } from './publish.ts';

// Idempotent producers whose last failed send may have been appended by the broker.
// Kept on the producer, not on its user: a new relay built on the same producer
// (RelaySwitch) must not send with it either. Weak, so a disposed producer is dropped.
const outcomeUnknown = new WeakSet<Producer>();

/** Whether `producer` must be replaced before it sends again (see sendAcknowledged). */
export function needsRenewal(producer: Producer): boolean {
  return outcomeUnknown.has(producer);
}

export interface SendAcknowledgedOptions {
  /**
   * Fail when a message was not placed by `relayPartitioner` (its acknowledgement
   * could not be checked) instead of leaving it unchecked. Default false.
   */
  requireChecked?: boolean;
}

/**
 * `producer.sendBatch`, made safe to build an outbox on:
 * - resolves only once the broker acknowledged every partition written to
 *   (`checkAcknowledged`; kafkajs resolves sends that skipped a partition);
 * - after a failed send of an idempotent producer, refuses to send with it again
 *   (`ProducerRenewalRequiredError`). kafkajs winds a partition's sequence number back
 *   on ANY failed request, also a timeout or a reset after the broker had appended the
 *   batch. The next batch there reuses the numbers, and if it has as many messages the
 *   broker takes it for the lost one: "duplicate", the old offset, nothing written, and
 *   the caller believes it sent rows that are not on the topic. Only an outright
 *   refusal of one partition (a row error: nothing written anywhere) leaves the
 *   producer usable. A non-idempotent producer has no sequence numbers to reuse.
 */
export async function sendAcknowledged(
  producer: Producer,
  batch: ProducerBatch,
  options: SendAcknowledgedOptions = {},
): Promise<RecordMetadata[]> {
  if (outcomeUnknown.has(producer)) throw new ProducerRenewalRequiredError();
  const messages = (batch.topicMessages ?? []).flatMap((t) => t.messages);
  let acknowledged: RecordMetadata[];
  try {
    acknowledged = await producer.sendBatch(batch);
  } catch (error) {
    if (producer.isIdempotent() && !refusedOutright(error, messages)) outcomeUnknown.add(producer);
    throw error;
  }
  if (options.requireChecked && messages.some((m) => !assignedPartition(m)))
    throw new OutboxError(
      'the producer was not built with createPartitioner: relayPartitioner, so its acknowledgements cannot be checked',
    );
  checkAcknowledged(messages, acknowledged);
  return acknowledged;
}

// The broker refused a request that carried a single partition for a reason in the
// message (too large, bad topic): it wrote nothing, and kafkajs' rewound sequence is
// right. With several partitions it may have written the others (kafkajs rewinds all).
function refusedOutright(error: unknown, messages: Message[]): boolean {
  if (!isRowError(error)) return false;
  const partitions = new Set<string>();
  for (const message of messages) {
    const where = assignedPartition(message);
    if (!where) return false;
    partitions.add(`${where.topic}\u0000${where.partition}`);
  }
  return partitions.size === 1;
}
