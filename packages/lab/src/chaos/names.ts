// No imports, on purpose: the dashboard's wire contract (bundled for the browser) takes
// the names from here, through the package's "./failure-point-names" export.

/** The failure points of the seed's scenarios, by the name stored in `failure_points`. */
export const FailurePoint = {
  /** naive: the order commits, then the produce fails for real (socket closed). */
  naiveNetworkDropAfterCommit: 'naive.network_drop_after_commit',
  /** naive: Kafka acked, then the process dies before COMMIT: a phantom event. */
  naiveCrashBeforeCommit: 'naive.crash_before_commit',
  /** worker: exits after Kafka acked the batch, before UPDATE sent_at. */
  workerKillMidPublish: 'worker.kill_mid_publish',
  /** worker ↔ Kafka sockets refused/closed until params.until (epoch ms). */
  workerKafkaOutage: 'worker.kafka_outage',
  /** consumer: exits after its DB commit, before committing the Kafka offset. */
  consumerCrashBeforeOffsetCommit: 'consumer.crash_before_offset_commit',
  /** consumer: the inbox is bypassed; duplicates are applied again. */
  consumerInboxOff: 'consumer.inbox_off',
  /** workers relay without sharding: FIFO per aggregate is no longer guaranteed. */
  workersUnsharded: 'worker.unsharded',
  /** CDC: the demo SIGKILLs Kafka Connect, then starts it again on its slot and offsets. */
  connectKillMidStream: 'connect.kill_mid_stream',
  /** CDC: Kafka Connect is stopped until params.until (epoch ms), then started again. */
  connectDown: 'connect.down',
  /**
   * 3 brokers: the demo SIGKILLs the broker leading the busiest partition of
   * orders.events and starts it again after params.seconds (default 10).
   */
  brokerKillLeader: 'broker.kill_leader',
  /** 3 brokers: a follower of that partition is stopped (SIGSTOP) until params.until, then resumed. */
  brokerStopFollower: 'broker.stop_follower',
  /**
   * 3 brokers, the deterministic form of the acks = 1 lesson: the partition's followers
   * are stopped (SIGSTOP) so they copy nothing, a few seconds of traffic go to the leader
   * alone, the leader is SIGKILLed, the followers resumed (one of them is elected), the
   * old leader started again (it truncates what only it had).
   */
  brokerKillLeaderUnreplicated: 'broker.kill_leader_unreplicated',
} as const;
export type FailurePointName = (typeof FailurePoint)[keyof typeof FailurePoint];
/** Every failure point's name, as a non-empty tuple (zod's enum takes it as it is). */
export const FAILURE_POINT_NAMES = Object.values(FailurePoint) as [
  FailurePointName,
  ...FailurePointName[],
];
