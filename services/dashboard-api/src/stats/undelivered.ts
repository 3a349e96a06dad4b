import { Partitioners, type PartitionMetadata } from 'kafkajs';
import type { OrderMode } from '../contract.ts';
import { nextRead, type GroupReading } from './group-progress.ts';

/** An order judged without events (OrdersWithoutEvents), with what the database says of it. */
export interface LostOrder {
  orderId: string;
  mode: OrderMode;
  /** Outbox: its OrderCreated row was marked sent. Naive orders have no row. */
  sent: boolean;
}

interface Waiting extends LostOrder {
  /** Date.now() when it was judged: a reading after this sees its event if it was produced. */
  judgedAt: number;
  /** Where the group must have read to have passed it: partition and high watermark. */
  mark?: { partition: number; offset: bigint };
  /** Judged at start or reset: decided without an anomaly (it happened before). */
  quiet: boolean;
}

const partitioner = Partitioners.DefaultPartitioner();
const metadataCache = new Map<number, PartitionMetadata[]>();
const metadataOf = (n: number): PartitionMetadata[] => {
  let m = metadataCache.get(n);
  if (!m) {
    m = Array.from({ length: n }, (_, i) => ({
      partitionErrorCode: 0,
      partitionId: i,
      leader: 0,
      replicas: [0],
      isr: [0],
    }));
    metadataCache.set(n, m);
  }
  return m;
};

/**
 * The partition of an order's events: kafkajs' DefaultPartitioner (Java's murmur2 on
 * the key, the order id), which both the relay and order-api's naive producer use.
 */
export function partitionOf(orderId: string, partitions: number): number {
  return partitioner({
    topic: '',
    partitionMetadata: metadataOf(partitions),
    message: { key: orderId, value: null },
  });
}

/**
 * Tells apart the orders without events: never published (really lost) and published
 * but not consumed (consumer lag, a stalled consumer).
 *
 * PostgreSQL alone cannot: both are "no delivery recorded". Kafka can. When an order is
 * judged (older than the settle window, so its event, if any, was produced by then),
 * the first reading after that notes its partition's high watermark: the event is
 * below it. While the group's committed offset on that partition is below the mark,
 * the event may be waiting there: published, not consumed. Once the group has read
 * past the mark and still no delivery came, nothing of it was on the topic: never
 * published. That verdict is final until a delivery clears the order.
 *
 * An outbox order without a sent row is never published outright. A naive order has no
 * record of its produce: it waits for the mark like a sent one.
 */
export class UndeliveredOrders {
  private readonly waiting = new Map<string, Waiting>();
  private readonly lost = new Map<string, LostOrder>();
  private naiveLost = 0;

  get neverPublished(): number {
    return this.lost.size;
  }

  /** Never published, written in naive mode: the seed's "network died after commit". */
  get neverPublishedNaive(): number {
    return this.naiveLost;
  }

  get publishedNotConsumed(): number {
    return this.waiting.size;
  }

  /** Forgets every verdict (start and reset: the next sync is quiet). */
  reset(): void {
    this.waiting.clear();
    this.lost.clear();
    this.naiveLost = 0;
  }

  /**
   * Follows the set of orders judged without events (OrdersWithoutEvents): new ones
   * wait for a verdict, delivered ones leave. `quiet`: they were found at start or
   * reset, so their verdict raises no anomaly (it happened before).
   */
  sync(current: ReadonlyMap<string, LostOrder>, now = Date.now(), quiet = false): void {
    for (const id of this.waiting.keys()) if (!current.has(id)) this.waiting.delete(id);
    for (const [id, o] of this.lost)
      if (!current.has(id)) {
        this.lost.delete(id);
        if (o.mode === 'naive') this.naiveLost -= 1;
      }
    for (const [id, o] of current)
      if (!this.waiting.has(id) && !this.lost.has(id))
        this.waiting.set(id, { ...o, judgedAt: now, quiet });
  }

  /**
   * Decides what the latest reading allows; returns the orders that just turned out
   * never published (not those judged at start or reset: they happened before).
   */
  classify(reading: GroupReading | undefined): LostOrder[] {
    const decided: LostOrder[] = [];
    for (const [id, w] of this.waiting) {
      if (!this.neverPublishedNow(w, reading)) continue;
      this.waiting.delete(id);
      const order: LostOrder = { orderId: w.orderId, mode: w.mode, sent: w.sent };
      this.lost.set(id, order);
      if (order.mode === 'naive') this.naiveLost += 1;
      if (!w.quiet) decided.push(order);
    }
    return decided;
  }

  private neverPublishedNow(w: Waiting, reading: GroupReading | undefined): boolean {
    if (w.mode === 'outbox' && !w.sent) return true;
    if (!w.mark) {
      // Only a reading made after the order was judged is sure to cover its event.
      if (!reading || reading.at <= w.judgedAt) return false;
      // No topic: nothing of it can be there.
      if (reading.partitions.length === 0) return true;
      const partition = partitionOf(w.orderId, reading.partitions.length);
      const p = reading.partitions.find((x) => x.partition === partition);
      if (!p) return false;
      w.mark = { partition, offset: p.high };
    }
    const { partition, offset } = w.mark;
    const p = reading?.partitions.find((x) => x.partition === partition);
    return p !== undefined && nextRead(p) >= offset;
  }
}
