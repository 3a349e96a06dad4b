import { describe, expect, it } from 'vitest';
import { GroupProgress, type GroupReading } from '../src/stats/group-progress.ts';
import { partitionOf, UndeliveredOrders, type LostOrder } from '../src/stats/undelivered.ts';

const reading = (at: number, parts: [committed: number | null, high: number][]): GroupReading => ({
  at,
  members: 1,
  partitions: parts.map(([committed, high], partition) => ({
    partition,
    committed: committed === null ? null : BigInt(committed),
    low: 0n,
    high: BigInt(high),
  })),
});

describe('GroupProgress (pure)', () => {
  it('is stalled when the lag holds and the committed offsets stand for the stall window', () => {
    const g = new GroupProgress(15_000);
    expect(g.state(0)).toBe('unknown');
    g.observe(
      reading(0, [
        [5, 5],
        [3, 3],
      ]),
    );
    expect(g.state(0)).toBe('caught_up');
    // Lag appears; the offsets stand still.
    g.observe(
      reading(1_000, [
        [5, 9],
        [3, 3],
      ]),
    );
    expect(g.state(10_000)).toBe('behind');
    g.observe(
      reading(15_999, [
        [5, 12],
        [3, 3],
      ]),
    );
    expect(g.state(15_999)).toBe('behind');
    g.observe(
      reading(16_000, [
        [5, 12],
        [3, 3],
      ]),
    );
    expect(g.state(16_000)).toBe('stalled');
    // It moves again: behind, not stalled.
    g.observe(
      reading(17_000, [
        [6, 12],
        [3, 3],
      ]),
    );
    expect(g.state(17_000)).toBe('behind');
    expect(g.movedAt).toBe(17_000);
  });

  it('counts a group without committed offsets from the low watermark (fromBeginning)', () => {
    const g = new GroupProgress(1_000);
    g.observe(
      reading(0, [
        [null, 4],
        [null, 0],
      ]),
    );
    expect(g.state(500)).toBe('behind');
    g.observe(
      reading(5_000, [
        [null, 4],
        [null, 0],
      ]),
    );
    expect(g.state(5_000)).toBe('stalled');
  });
});

describe('UndeliveredOrders (pure)', () => {
  const order = (orderId: string, mode: LostOrder['mode'], sent: boolean): LostOrder => ({
    orderId,
    mode,
    sent,
  });
  // Two ids on the same partition of 2, found by the partitioner itself.
  const ids = Array.from(
    { length: 40 },
    (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  );
  const onZero = ids.filter((id) => partitionOf(id, 2) === 0);

  it('waits for a reading after the verdict, then for the group to pass the mark', () => {
    const u = new UndeliveredOrders();
    const [a, b] = onZero as [string, string];
    u.sync(new Map([[a, order(a, 'naive', false)]]), 100);
    // A reading from before the verdict proves nothing.
    expect(
      u.classify(
        reading(50, [
          [0, 0],
          [0, 0],
        ]),
      ),
    ).toEqual([]);
    expect(u.publishedNotConsumed).toBe(1);
    // After it, with the group behind on partition 0: may be waiting there.
    expect(
      u.classify(
        reading(200, [
          [2, 5],
          [0, 0],
        ]),
      ),
    ).toEqual([]);
    expect(u.publishedNotConsumed).toBe(1);
    // New messages after the mark do not hold it back; the group passing 5 decides.
    expect(
      u.classify(
        reading(300, [
          [4, 9],
          [0, 0],
        ]),
      ),
    ).toEqual([]);
    expect(
      u.classify(
        reading(400, [
          [5, 9],
          [0, 0],
        ]),
      ),
    ).toEqual([order(a, 'naive', false)]);
    expect([u.neverPublished, u.neverPublishedNaive, u.publishedNotConsumed]).toEqual([1, 1, 0]);
    // An outbox order with no sent row is never published at once, with no reading at all.
    u.sync(
      new Map([
        [a, order(a, 'naive', false)],
        [b, order(b, 'outbox', false)],
      ]),
      500,
    );
    expect(u.classify(undefined)).toEqual([order(b, 'outbox', false)]);
    expect([u.neverPublished, u.neverPublishedNaive]).toEqual([2, 1]);
    // A delivery after all: the order leaves.
    u.sync(new Map([[b, order(b, 'outbox', false)]]), 600);
    expect([u.neverPublished, u.neverPublishedNaive]).toEqual([1, 0]);
  });

  it('decides orders found at start without raising them again', () => {
    const u = new UndeliveredOrders();
    const [a] = onZero as [string];
    u.sync(new Map([[a, order(a, 'outbox', true)]]), 100, true);
    expect(
      u.classify(
        reading(200, [
          [7, 7],
          [0, 0],
        ]),
      ),
    ).toEqual([]);
    expect(u.neverPublished).toBe(1);
  });
});
