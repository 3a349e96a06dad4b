import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FailurePoint, FailurePoints } from '../src/index.ts';
import { createTestDb, type TestDb, waitFor } from '../../testkit/src/index.ts';

describe('FailurePoints shared through PostgreSQL', () => {
  let db: TestDb;
  let a: FailurePoints;
  let b: FailurePoints;
  beforeEach(async () => {
    db = await createTestDb();
    a = new FailurePoints(db.pool, { listen: db.config, refreshMs: 60_000 });
    b = new FailurePoints(db.pool, { listen: db.config, refreshMs: 60_000 });
    await Promise.all([a.start(), b.start()]);
  });
  afterEach(async () => {
    await Promise.all([a.stop(), b.stop()]);
    await db.close();
  });

  it('"once" fires exactly once across replicas, and changes reach them by NOTIFY', async () => {
    await a.arm(FailurePoint.workerKillMidPublish, { mode: 'once' });
    await waitFor(() => b.state(FailurePoint.workerKillMidPublish)?.mode === 'once', {
      what: 'notify',
    });
    const shots = await Promise.all([
      a.fire(FailurePoint.workerKillMidPublish),
      b.fire(FailurePoint.workerKillMidPublish),
      a.fire(FailurePoint.workerKillMidPublish),
    ]);
    expect(shots.filter(Boolean)).toHaveLength(1);
    expect(
      (await a.list()).find((s) => s.name === FailurePoint.workerKillMidPublish),
    ).toMatchObject({
      mode: 'off',
      fired: 1,
    });
  });

  it('"times" fires N times; "on" until switched off; a window ends by itself', async () => {
    await a.arm(FailurePoint.naiveNetworkDropAfterCommit, { mode: 'times', times: 3 });
    let fired = 0;
    for (let i = 0; i < 5; i += 1)
      if (await a.fire(FailurePoint.naiveNetworkDropAfterCommit)) fired += 1;
    expect(fired).toBe(3);

    await a.arm(FailurePoint.consumerInboxOff, { mode: 'on' });
    await waitFor(() => b.isActive(FailurePoint.consumerInboxOff), { what: 'switch on' });
    await a.arm(FailurePoint.consumerInboxOff, { mode: 'off' });
    await waitFor(() => !b.isActive(FailurePoint.consumerInboxOff), { what: 'switch off' });

    const until = Date.now() + 300;
    await a.arm(FailurePoint.workerKafkaOutage, { mode: 'on', params: { until } });
    await waitFor(() => b.isActive(FailurePoint.workerKafkaOutage), { what: 'outage on' });
    expect(b.isActive(FailurePoint.workerKafkaOutage, until + 1)).toBe(false);
  });
});
