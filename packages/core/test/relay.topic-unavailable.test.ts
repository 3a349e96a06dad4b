import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRowError, isTopicUnavailableError, TopicUnavailableError } from '../src/index.ts';
import { createTestDb, readTopic, type TestDb, testKafka } from '../../testkit/src/index.ts';
import { orderEvent, RelayHarness } from './support/relay.ts';

const MAX_ATTEMPTS = 3;
const FAILED_TICKS = 5;

/** A pino logger whose JSON lines land in `lines`. */
function capturingLogger(lines: Record<string, unknown>[]) {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return pino({ level: 'warn' }, sink);
}

/**
 * A topic that does not exist yet (being created, or its creation lags the deploy) and
 * a topic the relay is not yet allowed to write (an ACL being fixed) are conditions of
 * Kafka, not of the rows: the tick fails and backs off, nothing is counted against any
 * row, and once the topic is there every row is published, in order.
 */
describe('relay: a topic that is not there yet is a Kafka-level failure, not the rows', () => {
  const kafka = testKafka();
  let db: TestDb;
  let h: RelayHarness;

  beforeEach(async () => {
    db = await createTestDb();
    h = new RelayHarness(db, kafka);
  });
  afterEach(async () => {
    await h.close();
    await db.close();
  });

  async function rows() {
    const { rows: found } = await db.pool.query<{
      id: string;
      attempts: number;
      error: string | null;
      sent_at: Date | null;
      dead_lettered_at: Date | null;
    }>('SELECT id, attempts, error, sent_at, dead_lettered_at FROM outbox ORDER BY id');
    return found;
  }

  it('UNKNOWN_TOPIC_OR_PARTITION (auto-creation off): no attempts, no dead letter; published once the topic exists', async () => {
    const topic = `test.later.${randomBytes(4).toString('hex')}`;
    const ids = await h.append([orderEvent('A', 1), orderEvent('B', 1), orderEvent('A', 2)]);
    const lines: Record<string, unknown>[] = [];
    // A backoff so short that, were the failures counted, the rows would be dead-lettered
    // within the ticks below.
    const relay = await h.relay({
      topics: { order: topic },
      maxAttempts: MAX_ATTEMPTS,
      retryBaseSeconds: 0.001,
      retryMaxSeconds: 0.001,
      renewProducer: async (broken) => {
        await broken.disconnect();
        return h.producer();
      },
      log: capturingLogger(lines),
    });

    const outcomes: string[] = [];
    for (let i = 0; i < FAILED_TICKS; i += 1) {
      outcomes.push(
        await relay.tick().then(
          (r) => `resolved ${JSON.stringify(r)}`,
          (error: unknown) =>
            error instanceof TopicUnavailableError && error.retriable
              ? 'topic unavailable'
              : String(error),
        ),
      );
    }
    expect(outcomes).toEqual(Array.from({ length: FAILED_TICKS }, () => 'topic unavailable'));
    for (const row of await rows())
      expect(row).toMatchObject({
        attempts: 0,
        error: null,
        sent_at: null,
        dead_lettered_at: null,
      });
    // The log names the topic the relay could not write.
    const named = lines.filter(
      (l) => Array.isArray(l.topics) && (l.topics as string[]).includes(topic),
    );
    expect(named.length).toBeGreaterThanOrEqual(FAILED_TICKS);

    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3 }] });
    await admin.disconnect();

    expect(await relay.tick()).toMatchObject({ claimed: 3, sent: 3, failed: 0 });
    const received = await readTopic(kafka, topic, 3);
    expect(received.map((m) => m.headers.event_id).sort()).toEqual([...ids].sort());
    const ofA = received.filter((m) => m.key === 'A').map((m) => m.headers.event_id);
    expect(ofA).toEqual([ids[0], ids[2]]);
  });

  it('TOPIC_AUTHORIZATION_FAILED and UNKNOWN_TOPIC_OR_PARTITION are not row errors; a bad message is', () => {
    // kafkajs' shape: a retry error wrapping the broker's protocol error.
    const wrapped = (type: string) => ({
      name: 'KafkaJSNumberOfRetriesExceeded',
      originalError: { name: 'KafkaJSProtocolError', type },
    });
    expect(isRowError(wrapped('TOPIC_AUTHORIZATION_FAILED'))).toBe(false);
    expect(isRowError(wrapped('UNKNOWN_TOPIC_OR_PARTITION'))).toBe(false);
    expect(isRowError(wrapped('MESSAGE_TOO_LARGE'))).toBe(true);
    expect(isTopicUnavailableError(wrapped('TOPIC_AUTHORIZATION_FAILED'))).toBe(true);
    expect(isTopicUnavailableError(wrapped('MESSAGE_TOO_LARGE'))).toBe(false);
  });
});
