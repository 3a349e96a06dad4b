import { Partitioners, type ICustomPartitioner, type Message, type RecordMetadata } from 'kafkajs';
import { UnacknowledgedPartitionsError } from '../errors.ts';

// Where the partitioner put each message of a send. Keyed by the message object, which
// kafkajs hands to the partitioner as the caller built it; weak, so nothing is kept.
const assigned = new WeakMap<Message, { topic: string; partition: number }>();

/**
 * kafkajs' DefaultPartitioner (Java-compatible murmur2 on the key) that remembers which
 * partition it chose for each message. Build the relay's producer with
 * `createPartitioner: relayPartitioner` and the relay checks, after every send, that the
 * broker acknowledged each partition it wrote to, instead of trusting the client: kafkajs
 * 2.2.4 resolved sends that had skipped partitions whose leader moved (patched here, see
 * patches/kafkajs@2.2.4.patch), and the relay then marked unsent events sent.
 */
export const relayPartitioner: ICustomPartitioner = () => {
  const choose = Partitioners.DefaultPartitioner();
  return (args) => {
    const partition = choose(args);
    assigned.set(args.message, { topic: args.topic, partition });
    return partition;
  };
};

/** Where `relayPartitioner` put `message` (undefined: it never saw it). */
export function assignedPartition(
  message: Message,
): { topic: string; partition: number } | undefined {
  return assigned.get(message);
}

/**
 * Throws `UnacknowledgedPartitionsError` when a message went to a partition for which the
 * send returned no acknowledgement. Messages the partitioner did not see (a producer
 * built without `relayPartitioner`) are not checked. With acks = all, an acknowledgement
 * per partition is the broker's word that every message of it is replicated.
 */
export function checkAcknowledged(messages: Message[], acknowledged: RecordMetadata[]): void {
  // An acks = 0 send has no answer: kafkajs (as patched) lists its partitions as null.
  const acked = new Set(
    acknowledged.filter(Boolean).map((m) => `${m.topicName}\u0000${m.partition}`),
  );
  const missing = new Set<string>();
  for (const message of messages) {
    const where = assigned.get(message);
    if (where && !acked.has(`${where.topic}\u0000${where.partition}`))
      missing.add(`${where.topic}[${where.partition}]`);
  }
  if (missing.size > 0) throw new UnacknowledgedPartitionsError([...missing]);
}

/** Where the broker wrote a message: a partition and an offset (int64, as a decimal string). */
export interface LogPosition {
  partition: number;
  offset: string;
}

/**
 * The position of each message from the send's acknowledgements, or undefined where it
 * cannot be known (the partitioner did not see the message, or its partition's answer
 * carries no offset: acks = 0). kafkajs puts a send's messages for one partition into
 * one record batch, in the order given (offset deltas 0, 1, 2, …; a retry resends that
 * same batch), and the broker answers with the batch's base offset: message i of the
 * partition is at baseOffset + i.
 */
export function acknowledgedPositions(
  messages: Message[],
  acknowledged: RecordMetadata[],
): (LogPosition | undefined)[] {
  const base = new Map<string, bigint>();
  for (const m of acknowledged)
    if (m?.baseOffset !== undefined && BigInt(m.baseOffset) >= 0n)
      base.set(`${m.topicName}\u0000${m.partition}`, BigInt(m.baseOffset));
  const next = new Map<string, bigint>();
  return messages.map((message) => {
    const where = assigned.get(message);
    if (!where) return undefined;
    const key = `${where.topic}\u0000${where.partition}`;
    const start = base.get(key);
    if (start === undefined) return undefined;
    const index = next.get(key) ?? 0n;
    next.set(key, index + 1n);
    return { partition: where.partition, offset: (start + index).toString() };
  });
}
