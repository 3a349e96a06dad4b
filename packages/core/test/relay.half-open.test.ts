import type { Producer } from 'kafkajs';
import pg from 'pg';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
// Relative, as the testkit: @outbox/fault-proxy's tests use the testkit, which depends
// on core, and a workspace dependency back would be a cycle.
import { FaultProxy } from '../../fault-proxy/src/index.ts';
import { createPool, type DatabaseTimeouts, OutboxRelay, type OutboxRow } from '../src/index.ts';
import {
  createTestDb,
  createTopics,
  readTopic,
  type TestDb,
  testKafka,
  waitFor,
} from '../../testkit/src/index.ts';
import { orderEvent, RelayHarness } from './support/relay.ts';

// pg's client-side query timeout (not exported by core before the fix).
const QUERY_TIMEOUT = 'Query read timeout';

/**
 * Issue 10, defect 5: a relay whose PostgreSQL link goes silent (no data, no reset)
 * right after a claim. The server keeps that transaction, and with it the shards'
 * advisory locks and the rows' locks, until something ends the session; the other
 * replica must take over those shards within 30 s, and the stuck replica must never
 * mark anything sent once its link returns.
 */
describe('OutboxRelay: a half-open PostgreSQL link', () => {
  const kafka = testKafka();
  let db: TestDb;
  let h: RelayHarness;
  let proxy: FaultProxy;
  let pools: pg.Pool[];
  let relays: OutboxRelay[];
  let topic: string;
  const logLines: string[] = [];

  beforeEach(async () => {
    db = await createTestDb();
    h = new RelayHarness(db, kafka);
    topic = (await createTopics(kafka, ['orders'])).orders!;
    const target = new URL(db.databaseUrl);
    proxy = await FaultProxy.start({
      target: { host: target.hostname, port: Number(target.port) },
    });
    pools = [];
    relays = [];
    logLines.length = 0;
    onTestFailed(() => console.error(`relay logs:\n${logLines.slice(-30).join('')}`));
    // Who committed each sent mark: the trigger's row exists only if the markSent's
    // transaction committed; application_name names the replica, pid its session.
    await db.pool.query(`
      CREATE TABLE sent_marks (id bigint NOT NULL, app text NOT NULL, pid int NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
      CREATE FUNCTION record_sent_mark() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO sent_marks (id, app, pid) VALUES (NEW.id, current_setting('application_name'), pg_backend_pid());
        RETURN NULL;
      END $$;
      CREATE TRIGGER record_sent_mark AFTER UPDATE OF sent_at ON outbox
        FOR EACH ROW WHEN (NEW.sent_at IS NOT NULL) EXECUTE FUNCTION record_sent_mark();`);
  });
  afterEach(async () => {
    // Let a replica stuck in the silence finish (or fail) before it is stopped.
    proxy.setMode({ kind: 'pass' });
    await Promise.all(relays.map((r) => r.stop()));
    await h.close();
    await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
    await proxy.close();
    await db.close();
  });

  /** A pool as a service builds it: core's createPool, its session limits (`limits` on top of the defaults). */
  function servicePool(url: string, app: string, limits: Partial<DatabaseTimeouts> = {}): pg.Pool {
    const via = new URL(url);
    via.searchParams.set('application_name', app);
    const log = pino({ level: 'warn', base: { app } }, { write: (l: string) => logLines.push(l) });
    const pool = createPool(
      { DATABASE_URL: via.toString(), DATABASE_SCHEMA: db.schema, ...limits },
      log,
      { max: 3, watchCheckedOut: true },
    );
    pools.push(pool);
    return pool;
  }

  async function replica(
    pool: pg.Pool,
    replicaId: string,
    producer: Producer,
    afterPublish?: (rows: OutboxRow[]) => void,
  ): Promise<OutboxRelay> {
    const log = pino(
      { level: 'warn', base: { replicaId } },
      { write: (l: string) => logLines.push(l) },
    );
    const relay = new OutboxRelay({
      pool,
      producer,
      topics: { order: topic },
      replicaId,
      sharded: true,
      batchSize: 25,
      pollIntervalMs: 100,
      log,
      ...(afterPublish ? { hooks: { afterPublish } } : {}),
    });
    relays.push(relay);
    return relay;
  }

  /** What is left 30 s after the fault, and which session of relay-1 holds it. */
  async function pinned(faultedRows: string[]): Promise<Record<string, unknown>> {
    const { rows } = await db.pool.query<Record<string, unknown>>(
      `SELECT (SELECT count(*)::int FROM outbox WHERE sent_at IS NULL) AS pending,
              (SELECT count(*)::int FROM outbox WHERE sent_at IS NULL AND id = ANY($1::bigint[])) AS "faultedBatchUnsent",
              (SELECT json_agg(json_build_object('state', a.state,
                         'secondsInTransaction', round(extract(epoch FROM now() - a.xact_start)),
                         'shardLocks', (SELECT count(*) FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted)))
                 FROM pg_stat_activity a WHERE a.application_name = 'relay-1' AND a.xact_start IS NOT NULL) AS "relay1Transactions"`,
      [faultedRows],
    );
    return rows[0] ?? {};
  }

  const sentMarks = async () =>
    (
      await db.pool.query<{ id: string; app: string; pid: number; at: Date }>(
        'SELECT id::text, app, pid, at FROM sent_marks ORDER BY at',
      )
    ).rows;

  /** Both replicas see each other and hold 32 shards each. */
  const shardsSplit = () =>
    waitFor(
      async () => {
        const { rows } = await db.pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM outbox_relay_members WHERE cardinality(shards) = 32',
        );
        return rows[0]?.n === 2;
      },
      { what: 'two replicas holding 32 shards each', timeoutMs: 60_000 },
    );

  interface Scenario {
    /** Session limits of the stuck replica's pool (the defaults otherwise). */
    stuckEnv?: Partial<DatabaseTimeouts>;
    /** When the link comes back, given the time of the fault. */
    linkBack: (fault: { at: number }) => Promise<void>;
    /** The other replica relays every row of the first wave by then. */
    drainedBy: (fault: { at: number }) => number;
    /** Whether the other replica drains the first wave alone (the link still silent). */
    drainedWhileSilent: boolean;
  }

  async function silentAfterClaim(scenario: Scenario) {
    const proxied = new URL(db.databaseUrl);
    proxied.port = String(proxy.port);
    let fault: { at: number; rows: string[] } | undefined;
    const stuck = await replica(
      servicePool(proxied.toString(), 'relay-1', scenario.stuckEnv),
      'relay-1',
      await h.producer(),
      (rows) => {
        // Kafka has the batch; the link falls silent before UPDATE sent_at … COMMIT.
        if (fault) return;
        fault = { at: Date.now(), rows: rows.map((r) => r.id) };
        proxy.setMode({ kind: 'black-hole' });
      },
    );
    const other = await replica(
      servicePool(db.databaseUrl, 'relay-2'),
      'relay-2',
      await h.producer(),
    );
    await Promise.all([stuck.start(), other.start()]);
    // Both see each other and split the 64 shards before any row exists.
    await shardsSplit();

    // 300 aggregates cover every shard: each replica has rows to claim.
    const firstWave = await h.append(
      Array.from({ length: 600 }, (_, i) => orderEvent(`agg-${i % 300}`, i)),
    );
    const faulted = await waitFor(() => fault, { what: 'the claim that falls silent' });
    // The session that holds the silent claim: nothing may ever commit from it.
    const { rows: stuckSessions } = await db.pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE application_name = 'relay-1' AND xact_start IS NOT NULL`,
    );
    expect(stuckSessions).toHaveLength(1);
    const stuckPid = stuckSessions[0]!.pid;
    // The stuck replica's shards hold ~300 rows; it claimed 25 of them when it fell silent.
    await scenario.linkBack(faulted);
    const drained = await waitFor(async () => (await h.pending()) === 0, {
      what: "the other replica relaying the stuck replica's shards",
      timeoutMs: Math.max(1_000, scenario.drainedBy(faulted) - Date.now()),
      intervalMs: 250,
    }).catch(() => false);
    const tookOverMs = Date.now() - faulted.at;
    // On a timeout, show what pins the shards: the stuck session, its locks, the rows.
    if (!drained) expect(await pinned(faulted.rows)).toEqual({ pending: 0 });
    if (scenario.drainedWhileSilent) {
      const markedBy = new Map((await sentMarks()).map((m) => [m.id, m.app]));
      expect(faulted.rows.filter((id) => markedBy.get(id) !== 'relay-2')).toEqual([]);
    }
    const countOnTopic = async (until: (n: Map<string, number>) => boolean) => {
      const counts = new Map<string, number>();
      await readTopic(kafka, topic, {
        until: (received) => {
          counts.clear();
          for (const m of received)
            counts.set(m.headers.event_id!, (counts.get(m.headers.event_id!) ?? 0) + 1);
          return until(counts);
        },
        settleMs: 1_500,
        timeoutMs: 60_000,
      });
      return counts;
    };
    // At least once: every row on the topic; the faulted batch twice is allowed.
    const before = await countOnTopic((c) => firstWave.every((id) => c.has(id)));
    expect(firstWave.filter((id) => !before.has(id))).toEqual([]);

    // The link is back (if it was not yet). Whatever the stuck replica had in flight
    // must not commit: the server ended that claim before the other replica took over.
    proxy.setMode({ kind: 'pass' });
    // Proof that the stuck replica works again (so it had every chance to commit a
    // stale markSent): it relays rows of a second wave itself. The wave goes in once it
    // holds its half again: appended while the other replica still held all 64 shards,
    // the wave was drained by that one alone in a few seconds (seen in CI).
    await shardsSplit();
    const secondWave = await h.append(
      Array.from({ length: 300 }, (_, i) => orderEvent(`agg-${i}`, 1_000 + i)),
    );
    await waitFor(
      async () => {
        const all = await sentMarks();
        const second = new Set(secondWave);
        return (
          (await h.pending()) === 0 && all.some((m) => m.app === 'relay-1' && second.has(m.id))
        );
      },
      { what: 'the recovered replica relaying rows of the second wave', timeoutMs: 120_000 },
    );

    expect((await sentMarks()).filter((m) => m.pid === stuckPid)).toEqual([]);
    if (scenario.drainedWhileSilent) {
      // The stuck replica came back to an empty first wave: no mark of it is its own.
      const firstWaveIds = new Set(firstWave);
      const late = (await sentMarks()).filter((m) => m.app === 'relay-1' && firstWaveIds.has(m.id));
      expect(late).toEqual([]);
    }
    const after = await countOnTopic((c) => secondWave.every((id) => c.has(id)));
    // Nothing of the first wave was published again after the link came back.
    expect(firstWave.filter((id) => after.get(id) !== before.get(id))).toEqual([]);
    expect(secondWave.filter((id) => !after.has(id))).toEqual([]);
    return { tookOverMs };
  }

  it('black-holed after a claim: the other replica relays its shards within 30 s, the stuck one marks nothing sent afterwards', async () => {
    const { tookOverMs } = await silentAfterClaim({
      // The link stays silent until the other replica has drained everything.
      linkBack: async () => undefined,
      drainedBy: (fault) => fault.at + 30_000,
      drainedWhileSilent: true,
    });
    // The 30 s bound is the issue's; the figure itself belongs to a benchmark.
    console.info(`half-open: the other replica drained ${tookOverMs} ms after the fault`);
  });

  it('the link returns to a session the server kept: the stuck replica gave up (query timeout), nothing of its claim commits', async () => {
    await silentAfterClaim({
      // No idle-in-transaction limit on the stuck replica's sessions: its claim lives
      // until the link returns, and then its held bytes reach a live transaction.
      stuckEnv: {
        DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: 0,
        DATABASE_STATEMENT_TIMEOUT_MS: 3000,
        DATABASE_LOCK_TIMEOUT_MS: 3000,
        DATABASE_QUERY_TIMEOUT_MS: 5000,
      },
      async linkBack() {
        await waitFor(
          () => logLines.some((l) => l.includes('relay tick failed') && l.includes(QUERY_TIMEOUT)),
          { what: "the stuck replica's tick failing by its query timeout", timeoutMs: 60_000 },
        );
        proxy.setMode({ kind: 'pass' });
      },
      // Its shards are free once the held bytes end the session: UPDATE, then Terminate.
      drainedBy: () => Date.now() + 30_000,
      drainedWhileSilent: false,
    });
  });
});
