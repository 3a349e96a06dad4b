import type { Kafka, Producer } from 'kafkajs';
import {
  OutboxRelay,
  OutboxWriter,
  relayPartitioner,
  withTransaction,
  type OutboxEvent,
  type RelayOptions,
} from '../../src/index.ts';
import type { TestDb } from '../../../testkit/src/index.ts';

/** Connected producers and started relays of one test, closed together. */
export class RelayHarness {
  private producers: Producer[] = [];
  private relays: OutboxRelay[] = [];
  readonly writer = new OutboxWriter();

  constructor(
    private readonly db: TestDb,
    private readonly kafka: Kafka,
  ) {}

  async producer(): Promise<Producer> {
    // Idempotent, as a relay's producer should be: retried produce requests are
    // deduplicated by the broker, so "no crash → each event once" holds.
    const producer = this.kafka.producer({
      // Every relay test also checks the acknowledgement guard finds nothing missing.
      createPartitioner: relayPartitioner,
      allowAutoTopicCreation: false,
      idempotent: true,
      maxInFlightRequests: 1,
      retry: { retries: 2 },
    });
    await producer.connect();
    this.producers.push(producer);
    return producer;
  }

  /**
   * A relay's renewProducer, as publisher-worker's: the broken producer disconnected,
   * a new one like `producer()` connected in its place.
   */
  renewProducer = async (broken: Producer): Promise<Producer> => {
    await broken.disconnect().catch(() => undefined);
    return this.producer();
  };

  async relay(
    options: Omit<RelayOptions, 'pool' | 'producer'> & { producer?: Producer },
  ): Promise<OutboxRelay> {
    const relay = new OutboxRelay({
      pool: this.db.pool,
      producer: options.producer ?? (await this.producer()),
      pollIntervalMs: 100,
      // As publisher-worker's: a relay without it stops at the first unknown outcome.
      renewProducer: this.renewProducer,
      ...options,
    });
    this.relays.push(relay);
    return relay;
  }

  async append(events: OutboxEvent[]): Promise<string[]> {
    const appended = await withTransaction(this.db.pool, (c) => this.writer.appendBatch(c, events));
    return appended.map((a) => a.id);
  }

  async pending(): Promise<number> {
    const { rows } = await this.db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM outbox WHERE sent_at IS NULL',
    );
    return rows[0]?.n ?? 0;
  }

  async close(): Promise<void> {
    await Promise.all(this.relays.map((r) => r.stop()));
    await Promise.all(this.producers.map((p) => p.disconnect()));
  }
}

export function orderEvent(
  aggregateId: string,
  seq: number,
  extra: Record<string, unknown> = {},
): OutboxEvent {
  return {
    aggregateType: 'order',
    aggregateId,
    eventType: 'OrderEvent',
    payload: { orderId: aggregateId, seq, ...extra },
    headers: { correlationId: `corr-${aggregateId}-${seq}` },
  };
}
