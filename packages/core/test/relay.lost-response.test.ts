import type pg from 'pg';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
// Relative, as the testkit: @outbox/fault-proxy's tests use the testkit, which depends
// on core, so a dependency of core on it would be a cycle.
import {
  type FaultProxy,
  kafkaThroughProxy,
  loseNextResponse,
} from '../../fault-proxy/src/index.ts';
import type { OutboxRelay } from '../src/index.ts';
import {
  createTestDb,
  createTopics,
  readTopic,
  type Received,
  type TestDb,
  testKafka,
  waitFor,
} from '../../testkit/src/index.ts';
import { orderEvent, RelayHarness } from './support/relay.ts';

/**
 * The ambiguous fault of an outbox: the broker appended a batch and its answer was
 * lost. kafkajs then winds the partition's sequence number back; a different batch
 * with as many messages under the same producer id, epoch and sequence is taken by
 * the broker for the lost one ("duplicate", the old offset, nothing written). The row
 * set of the next tick differs whenever a row lock is not obtained (here: another
 * session holds A), shards move, or RelaySwitch builds a new relay on the producer.
 */
describe('relay after a produce whose response was lost', () => {
  const [broker] = inject('kafkaBrokers');
  const direct = testKafka();
  let proxy: FaultProxy;
  let db: TestDb;
  let h: RelayHarness;
  let topic: string;
  let locker: pg.PoolClient | undefined;

  beforeEach(async () => {
    const through = await kafkaThroughProxy(broker!, 'lost-response');
    proxy = through.proxy;
    const proxied = through.kafka;
    db = await createTestDb();
    h = new RelayHarness(db, proxied);
    // One partition: A and B share it, as any two rows of one partition would.
    topic = (await createTopics(direct, ['orders'], { numPartitions: 1 })).orders!;
  });
  afterEach(async () => {
    await locker?.query('ROLLBACK').catch(() => undefined);
    locker?.release();
    locker = undefined;
    proxy.setMode({ kind: 'pass' });
    await h.close();
    await proxy.close();
    await db.close();
  });

  /** Relays a first row so that the producer is connected and has the topic's metadata. */
  async function warmUp(relay: OutboxRelay): Promise<string> {
    const [w] = await h.append([orderEvent('W', 1)]);
    expect(await relay.tick()).toMatchObject({ sent: 1 });
    return w!;
  }

  /** The tick relaying A meets the fault and rejects; the broker has appended A. */
  async function loseTheAnswerTo(relay: OutboxRelay): Promise<string> {
    const [a] = await h.append([orderEvent('A', 1)]);
    const fault = loseNextResponse(proxy);
    await expect(relay.tick()).rejects.toThrow();
    await fault.acted;
    fault.heal();
    expect(await sentAt(a!)).toBeNull();
    return a!;
  }

  /** Another session holds A's row: the next claim skips it (SKIP LOCKED). */
  async function holdRow(id: string): Promise<void> {
    locker = await db.pool.connect();
    await locker.query('BEGIN');
    await locker.query('SELECT id FROM outbox WHERE id = $1 FOR UPDATE', [id]);
  }

  async function sentAt(id: string): Promise<Date | null> {
    const { rows } = await db.pool.query<{ sent_at: Date | null }>(
      'SELECT sent_at FROM outbox WHERE id = $1',
      [id],
    );
    return rows[0]!.sent_at;
  }

  /** Ticks until `id` is marked sent (the first ticks may meet the reconnect). */
  async function relayUntilSent(relay: OutboxRelay, id: string): Promise<void> {
    await waitFor(
      async () => {
        await relay.tick().catch(() => undefined);
        return (await sentAt(id)) !== null;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: `row ${id} marked sent` },
    );
  }

  const idsOn = (received: Received[]) => received.map((m) => m.headers.event_id);

  it('a different row relayed next is on the topic when it is marked sent', async () => {
    const relay = await h.relay({ topics: { order: topic }, renewProducer: h.renewProducer });
    const w = await warmUp(relay);
    const a = await loseTheAnswerTo(relay);
    // The broker did append A: the fault is the ambiguous one, not a refusal.
    expect(idsOn(await readTopic(direct, topic, 2))).toEqual([w, a]);

    await holdRow(a);
    const [b] = await h.append([orderEvent('B', 1)]);
    await relayUntilSent(relay, b!);
    const received = await readTopic(direct, topic, {
      until: (r) => idsOn(r).includes(b!),
      timeoutMs: 15_000,
    });
    expect(idsOn(received)).toContain(b);
  });

  it('also when a new relay takes over the producer (RelaySwitch builds one on it)', async () => {
    // RelaySwitch hands every relay it builds the producer of its options.
    const producer = await h.producer();
    const first = await h.relay({
      topics: { order: topic },
      producer,
      renewProducer: h.renewProducer,
    });
    await warmUp(first);
    const a = await loseTheAnswerTo(first);
    await first.stop();

    await holdRow(a);
    const second = await h.relay({
      topics: { order: topic },
      producer,
      renewProducer: h.renewProducer,
    });
    const [b] = await h.append([orderEvent('B', 1)]);
    await relayUntilSent(second, b!);
    const received = await readTopic(direct, topic, {
      until: (r) => idsOn(r).includes(b!),
      timeoutMs: 15_000,
    });
    expect(idsOn(received)).toContain(b);
  });

  it('without renewProducer, the relay sends nothing else on that producer', async () => {
    const relay = await h.relay({ topics: { order: topic }, renewProducer: undefined });
    await warmUp(relay);
    const a = await loseTheAnswerTo(relay);

    await holdRow(a);
    const [b] = await h.append([orderEvent('B', 1)]);
    // Marking B sent is only right if B is on the topic; refusing to send is the
    // other safe answer, and the one a relay that cannot renew its producer gives.
    // Other errors (the reconnect after the fault) are tried again.
    const outcome = await waitFor(
      () =>
        relay.tick().then(
          (result) => result.sent > 0 && { refused: undefined },
          (error: unknown) => /renew/i.test(String(error)) && { refused: error },
        ),
      { timeoutMs: 60_000, intervalMs: 200, what: 'B sent or refused' },
    );
    if (!outcome.refused) {
      const received = await readTopic(direct, topic, {
        until: (r) => idsOn(r).includes(b!),
        timeoutMs: 15_000,
      });
      expect(idsOn(received)).toContain(b);
    } else {
      expect(await sentAt(b!)).toBeNull();
    }
  });
});
