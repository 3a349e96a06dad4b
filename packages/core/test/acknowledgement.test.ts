import type { Message, PartitionMetadata, RecordMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import {
  checkAcknowledged,
  relayPartitioner,
  UnacknowledgedPartitionsError,
} from '../src/index.ts';

// Pure logic: the partitioner's choices and the check against a send's acknowledgements.
// On the real broker, every relay test (support/relay.ts builds its producers with
// relayPartitioner) runs this check on each send and must find nothing missing.
const partitionMetadata = Array.from({ length: 6 }, (_, partitionId): PartitionMetadata => ({
  partitionErrorCode: 0,
  partitionId,
  leader: 1,
  replicas: [1],
  isr: [1],
}));

function place(topic: string, keys: string[]): { messages: Message[]; partitions: number[] } {
  const choose = relayPartitioner();
  const messages = keys.map((key) => ({ key, value: key }));
  const partitions = messages.map((message) => choose({ topic, partitionMetadata, message }));
  return { messages, partitions };
}

const ack = (topicName: string, partition: number): RecordMetadata => ({
  topicName,
  partition,
  errorCode: 0,
});

describe('checkAcknowledged', () => {
  const keys = Array.from({ length: 40 }, (_, i) => `order-${i}`);

  it('passes when every partition written to was acknowledged', () => {
    const { messages, partitions } = place('orders', keys);
    expect(new Set(partitions).size).toBeGreaterThan(1);
    expect(() =>
      checkAcknowledged(
        messages,
        [...new Set(partitions)].map((p) => ack('orders', p)),
      ),
    ).not.toThrow();
  });

  it('names the partitions a send resolved without (what kafkajs 2.2.4 did when a leader moved)', () => {
    const { messages, partitions } = place('orders', keys);
    const [skipped, ...rest] = [...new Set(partitions)].sort((a, b) => a - b);
    let error: unknown;
    try {
      checkAcknowledged(
        messages,
        rest.map((p) => ack('orders', p)),
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnacknowledgedPartitionsError);
    expect((error as UnacknowledgedPartitionsError).partitions).toEqual([`orders[${skipped}]`]);
    expect((error as UnacknowledgedPartitionsError).retriable).toBe(true);
  });

  it('tells topics apart: an ack for the same partition number of another topic does not count', () => {
    const { messages, partitions } = place('payments', ['p-1']);
    expect(() => checkAcknowledged(messages, [ack('orders', partitions[0]!)])).toThrow(
      UnacknowledgedPartitionsError,
    );
  });

  it('leaves messages the partitioner never saw unchecked (a producer built without it)', () => {
    expect(() => checkAcknowledged([{ key: 'k', value: 'v' }], [])).not.toThrow();
  });
});
