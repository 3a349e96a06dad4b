import type { Message, PartitionMetadata, RecordMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import {
  acknowledgedPositions,
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

describe('acknowledgedPositions', () => {
  const keys = Array.from({ length: 40 }, (_, i) => `order-${i}`);

  it("numbers each partition's messages from its batch's base offset, in the order sent", () => {
    const { messages, partitions } = place('orders', keys);
    const bases = new Map([...new Set(partitions)].map((p) => [p, BigInt(1_000 * (p + 1))]));
    const acknowledged = [...bases].map(([p, base]) => ({
      ...ack('orders', p),
      baseOffset: String(base + 2n ** 53n), // past 2^53: computed exactly
    }));
    const seen = new Map<number, bigint>();
    const expected = partitions.map((p) => {
      const i = seen.get(p) ?? 0n;
      seen.set(p, i + 1n);
      return { partition: p, offset: String(bases.get(p)! + 2n ** 53n + i) };
    });
    expect(acknowledgedPositions(messages, acknowledged)).toEqual(expected);
  });

  it('says nothing where it cannot know: no offset (acks = 0), a message the partitioner never saw', () => {
    const all = place('orders', keys);
    // Two messages on two partitions: the first's answer has an offset, the second's is
    // null (kafkajs, as patched, lists an acks = 0 send's partitions so).
    const j = all.partitions.findIndex((p) => p !== all.partitions[0]);
    const [first, second] = [all.messages[0]!, all.messages[j]!];
    const stranger: Message = { key: 'x', value: 'x' };
    const positions = acknowledgedPositions(
      [first, second, stranger],
      [
        { ...ack('orders', all.partitions[0]!), baseOffset: '7' },
        null as unknown as RecordMetadata,
      ],
    );
    expect(positions).toEqual([
      { partition: all.partitions[0], offset: '7' },
      undefined,
      undefined,
    ]);
    // checkAcknowledged reads past the null answer too.
    expect(() =>
      checkAcknowledged(
        [first],
        [ack('orders', all.partitions[0]!), null as unknown as RecordMetadata],
      ),
    ).not.toThrow();
  });
});
