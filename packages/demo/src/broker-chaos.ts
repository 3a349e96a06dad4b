import type pg from 'pg';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import {
  busiestPartition,
  FailurePoint,
  FailurePoints,
  partitionRates,
  readPartitions,
  writeDemoSetting,
  type PartitionState,
} from '@outbox/lab';
import type { KafkaCluster } from '@outbox/dev-stack';

/** Seconds "Kill the partition leader" keeps the broker down when the click says nothing. */
export const DEFAULT_RESTART_SECONDS = 10;

/**
 * Seconds of traffic the leader takes alone in broker.kill_leader_unreplicated. Shorter
 * than the cluster's replica.lag.time.max.ms (10 s) as a second guard; the first is the
 * lost quorum (see killLeaderUnreplicated).
 */
export const UNREPLICATED_SECONDS = 3;

/**
 * Rows per partition, marked sent after LeadAll, taken as proof that every relay's
 * producer has sent there since: with two workers, the chance that one of them has
 * none of a partition's 12 is 2 · 2^-12.
 */
const PRODUCER_PROOF = 12;

/** The demo setting the broker actions are recorded in (newest last), for the dashboard. */
export const BROKER_ACTIONS_KEY = 'broker_actions';
const KEPT_ACTIONS = 20;

export interface BrokerChaosOptions {
  pool: pg.Pool;
  cluster: KafkaCluster;
  /** orders.events, with the demo's prefix. */
  topic: string;
  log: (line: string) => void;
  /** How often the failure points and the nodes are checked (default 500 ms). */
  everyMs?: number;
}

export interface BrokerChaos {
  /** Resolves once no action is running (tests wait on it). */
  idle(): Promise<void>;
  /** Stops following; a node this paused is resumed, one it killed is started again. */
  stop(): Promise<void>;
}

/**
 * Carries out the broker.* failure points on the demo's 3-node cluster (the nodes are
 * this process's children, like Kafka Connect is the relay handover's), and starts
 * again a node that died without being told to (a `kill -9` from a shell):
 * - broker.kill_leader: SIGKILL of the broker leading the busiest partition of
 *   orders.events, started again after params.seconds (default 10);
 * - broker.stop_follower: a follower of that partition SIGSTOPped while the window
 *   is open, SIGCONTed when it closes;
 * - broker.kill_leader_unreplicated: see killLeaderUnreplicated.
 * Every action goes to the demo's log and to the `broker_actions` demo setting.
 */
export async function followBrokerChaos(options: BrokerChaosOptions): Promise<BrokerChaos> {
  const { pool, cluster, topic } = options;
  const actions: { at: string; text: string }[] = [];
  const log = (text: string) => {
    options.log(`broker      ${text}`);
    actions.push({ at: new Date().toISOString(), text });
    actions.splice(0, actions.length - KEPT_ACTIONS);
    void writeDemoSetting(pool, BROKER_ACTIONS_KEY, actions).catch(() => undefined);
  };
  const kafka = new Kafka({
    clientId: 'demo-broker-chaos',
    brokers: cluster.brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2_000,
    requestTimeout: 4_000,
    retry: { retries: 2, initialRetryTime: 200, maxRetryTime: 1_000 },
  });
  const points = new FailurePoints(pool, { refreshMs: 500 });
  await points.start();
  await writeDemoSetting(pool, BROKER_ACTIONS_KEY, []);

  /** Node id → when the demo starts it again (a node down on purpose). */
  const restartAt = new Map<number, number>();
  let stoppedFollower: number | undefined;
  let busy = false;
  let stopped = false;
  let inFlight: Promise<void> = Promise.resolve();

  const withAdmin = async <T>(fn: (admin: Admin) => Promise<T>): Promise<T> => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      return await fn(admin);
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  };

  /** The busiest partition of the topic (high-watermark deltas over one second). */
  const aim = async (): Promise<PartitionState> =>
    withAdmin(async (admin) => {
      const before = await readPartitions(admin, topic);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const after = await readPartitions(admin, topic);
      const busiest = busiestPartition(partitionRates(before, after, 1), after);
      const target = after.find((p) => p.partition === busiest);
      if (!target || target.leader === null)
        throw new Error(`${topic} has no partition with a leader to aim at`);
      return target;
    });

  const startNode = async (id: number, why: string) => {
    log(`starting node ${id} again (${why})`);
    await cluster.start(id);
    log(`node ${id} is up`);
  };

  const killLeader = async (params: Record<string, unknown>) => {
    const seconds = typeof params.seconds === 'number' ? params.seconds : DEFAULT_RESTART_SECONDS;
    const target = await aim();
    const leader = target.leader!;
    log(
      `kill_leader: SIGKILL to node ${leader}, leader of ${topic}[${target.partition}] (the busiest); it starts again in ${seconds} s`,
    );
    restartAt.set(leader, Date.now() + seconds * 1000);
    await cluster.kill(leader, 'SIGKILL');
  };

  /**
   * The deterministic form of the acks = 1 lesson. Every node of the dev-stack
   * cluster is also a KRaft controller (3 voters):
   * 1. The busiest partition's leader L is made leader of every partition of the topic
   *    (LeadAll). Without it the sends to the partitions the frozen nodes lead hang and
   *    fail the relay's whole batch, which is retried: only a batch that happens to
   *    touch L's partitions alone is lost, by chance (measured: 2 events lost without
   *    this step, 121 with it, same traffic). `params.leadAll: false` skips it.
   * 2. The two followers are SIGSTOPped. They fetch nothing, and with two of three
   *    voters frozen the quorum is gone: L cannot shrink the ISR (AlterPartition needs
   *    the controller), so the followers stay in the ISR. With acks = 1 L acknowledges
   *    what only it has; with acks = all the high watermark cannot advance and the
   *    produce waits (times out): nothing is acknowledged, nothing marked sent.
   * 3. After a few seconds of traffic, L is SIGKILLed, then the followers resumed: they
   *    form a quorum and elect one of themselves, cleanly (they are in the ISR), without
   *    what L acknowledged alone.
   * 4. L starts again as a follower and truncates its log to the new leader's: the
   *    acks = 1 batches are gone from the cluster, while the outbox says sent.
   */
  const killLeaderUnreplicated = async (params: Record<string, unknown>) => {
    const seconds = typeof params.seconds === 'number' ? params.seconds : UNREPLICATED_SECONDS;
    const target = await aim();
    const leader = target.leader!;
    const followers = target.replicas.filter((r) => r !== leader);
    // params.leadAll false skips step 1 (to see that without it nothing is lost).
    if (params.leadAll !== false) {
      log(
        `kill_leader_unreplicated: node ${leader} leads ${topic}[${target.partition}]; making it the leader of every partition`,
      );
      await cluster.leadAll(topic, leader);
      await producersFollow(leader);
    } else log(`kill_leader_unreplicated: node ${leader} leads ${topic}[${target.partition}]`);
    restartAt.set(leader, Number.POSITIVE_INFINITY);
    for (const f of followers) cluster.pause(f);
    log(
      `kill_leader_unreplicated: followers ${followers.join(', ')} frozen (SIGSTOP); ${seconds} s of traffic go to node ${leader} alone`,
    );
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    await cluster.kill(leader, 'SIGKILL');
    log(`kill_leader_unreplicated: SIGKILL to node ${leader}`);
    for (const f of followers) cluster.resume(f);
    log(
      `kill_leader_unreplicated: followers ${followers.join(', ')} resumed (SIGCONT): one of them is elected without node ${leader}'s unreplicated batches`,
    );
    // The old leader comes back once a follower leads: it then truncates to its log.
    await waitForLeaders(followers, 60_000);
    restartAt.delete(leader);
    await startNode(leader, 'it truncates what only it had');
  };

  /**
   * Waits until the relays' producers have written to the new leader on every partition
   * after LeadAll. A producer learns a partition moved only when it next sends there
   * (NOT_LEADER, then a metadata refresh); freezing the followers first left its send to
   * a follower it still took for the leader hanging, and the whole batch with it: the
   * fresh-clone CI of f3233ca lost nothing with acks = 1 that way (the workers' logs:
   * NOT_LEADER from the frozen nodes once resumed). Rows marked sent after LeadAll are in
   * the outbox with the partition the broker acknowledged (kafka_partition): when every
   * partition has PRODUCER_PROOF of them, every worker has, all but surely, sent to every
   * partition since (the rows of a partition fall to the workers by shard, independent
   * of the partition). At most 30 s; then it goes on and says so.
   */
  const producersFollow = async (leader: number) => {
    const started = Date.now();
    const { rows: top } = await pool.query<{ id: string }>(
      'SELECT coalesce(max(id), 0)::text AS id FROM outbox',
    );
    const partitions = (await withAdmin((admin) => readPartitions(admin, topic))).length;
    while (Date.now() - started < 30_000 && !stopped) {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (
           SELECT kafka_partition FROM outbox
            WHERE id > $1 AND topic = $2 AND kafka_partition IS NOT NULL
            GROUP BY kafka_partition HAVING count(*) >= $3) p`,
        [top[0]!.id, topic, PRODUCER_PROOF],
      );
      if ((rows[0]?.n ?? 0) >= partitions) {
        log(
          `kill_leader_unreplicated: the relays write to node ${leader} on all ${partitions} partitions (${((Date.now() - started) / 1000).toFixed(1)} s)`,
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    log(
      `kill_leader_unreplicated: the relays did not write to node ${leader} on every partition within 30 s (no traffic?); freezing anyway`,
    );
  };

  const waitForLeaders = async (among: number[], timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && !stopped) {
      const ok = await withAdmin(async (admin) => {
        const parts = await readPartitions(admin, topic);
        return (
          parts.length > 0 && parts.every((p) => p.leader !== null && among.includes(p.leader))
        );
      }).catch(() => false);
      if (ok) {
        log(`every partition of ${topic} has a leader among nodes ${among.join(', ')}`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    log(`no leader among ${among.join(', ')} for every partition after ${timeoutMs / 1000} s`);
  };

  const check = async () => {
    // broker.stop_follower: a window.
    if (points.isActive(FailurePoint.brokerStopFollower)) {
      if (stoppedFollower === undefined) {
        const target = await aim();
        const follower = target.replicas.find(
          (r) => r !== target.leader && cluster.isRunning(r) && !cluster.isPaused(r),
        );
        if (follower !== undefined) {
          cluster.pause(follower);
          stoppedFollower = follower;
          log(
            `stop_follower: node ${follower}, follower of ${topic}[${target.partition}], frozen (SIGSTOP) until the window closes`,
          );
        }
      }
    } else if (stoppedFollower !== undefined) {
      cluster.resume(stoppedFollower);
      log(
        `stop_follower: node ${stoppedFollower} resumed (SIGCONT); it catches up and rejoins the ISR`,
      );
      stoppedFollower = undefined;
    }
    const kill = await points.fire(FailurePoint.brokerKillLeader);
    if (kill) await killLeader(kill);
    const unreplicated = await points.fire(FailurePoint.brokerKillLeaderUnreplicated);
    if (unreplicated) await killLeaderUnreplicated(unreplicated);
    // A node down on purpose comes back on time; one killed from outside at once.
    for (const node of cluster.nodes) {
      if (cluster.isRunning(node.id)) continue;
      const due = restartAt.get(node.id);
      if (due !== undefined && Date.now() < due) continue;
      restartAt.delete(node.id);
      await startNode(node.id, due === undefined ? 'it died' : 'its time is up');
    }
  };

  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    inFlight = check()
      .catch((error: unknown) => log(`action failed: ${(error as Error).message}`))
      .finally(() => {
        busy = false;
      });
  }, options.everyMs ?? 500);
  timer.unref();

  return {
    idle: () => inFlight,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await inFlight;
      await points.stop();
      if (stoppedFollower !== undefined) cluster.resume(stoppedFollower);
    },
  };
}
