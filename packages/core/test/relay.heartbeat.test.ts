import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTestDb,
  createTopics,
  type TestDb,
  testKafka,
  waitFor,
} from '../../testkit/src/index.ts';
import { RelayHarness } from './support/relay.ts';

/**
 * A started sharded relay heartbeats on a timer of its own (ShardAssigner.start), not
 * inside its ticks: the membership statements are off the claim's path, and a replica
 * that sleeps between notifications stays alive in its peers' eyes all the same.
 */
describe('the relay membership heartbeat runs off the ticks', () => {
  const kafka = testKafka();
  let db: TestDb;
  let h: RelayHarness;
  let topics: Record<string, string>;

  beforeEach(async () => {
    db = await createTestDb();
    h = new RelayHarness(db, kafka);
    topics = await createTopics(kafka, ['orders']);
  });
  afterEach(async () => {
    await h.close();
    await db.close();
  });

  const heartbeat = async (replicaId: string) => {
    const { rows } = await db.pool.query<{ at: Date; sleeping: boolean }>(
      'SELECT heartbeat_at AS at, sleeping FROM outbox_relay_members WHERE replica_id = $1',
      [replicaId],
    );
    return rows[0];
  };

  it('a replica asleep (no tick for a minute) keeps beating every second', async () => {
    const relay = await h.relay({
      topics: { order: topics.orders! },
      sharded: true,
      listen: db.config,
      // Nothing to relay and no notification: no tick for a minute after it falls asleep.
      pollIntervalMs: 60_000,
    });
    await relay.start();
    const asleep = await waitFor(
      async () => {
        const beat = await heartbeat(relay.replicaId);
        return beat?.sleeping ? beat : undefined;
      },
      { what: 'the relay asleep' },
    );
    // Its first sleep can be cut short once: the wake-up listener's connect wakes it to
    // look for rows inserted before it listened, and each switch of the flag also writes
    // heartbeat_at (a CI run read that switch's "awake" row for a beat, 1 local run in 6).
    // So: two beats in a row, well after the first sleep, both while asleep. In the
    // 60 s sleep nothing but the heartbeat timer writes the row.
    const settled = asleep.at.getTime() + 2_000;
    const first = await waitFor(
      async () => {
        const beat = await heartbeat(relay.replicaId);
        return beat && beat.at.getTime() > settled ? beat : undefined;
      },
      { what: 'a heartbeat while asleep', timeoutMs: 10_000 },
    );
    const later = await waitFor(
      async () => {
        const beat = await heartbeat(relay.replicaId);
        return beat && beat.at > first.at ? beat : undefined;
      },
      { what: 'the next heartbeat while asleep', timeoutMs: 10_000 },
    );
    expect([first.sleeping, later.sleeping]).toEqual([true, true]);
    await relay.stop();
    // Stopped: it left the membership, and no beat brings it back.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await heartbeat(relay.replicaId)).toBeUndefined();
  });
});
