import type { FailurePointInfo } from '../contract.ts';

/** What each failure point does, what to watch, and the seed scenario it reproduces. */
export const FAILURE_POINTS: readonly FailurePointInfo[] = [
  {
    name: 'naive.network_drop_after_commit',
    label: 'Network drop after commit',
    kind: 'shot',
    appliesTo: 'naive',
    description:
      'In naive mode order-api commits the order, then its connection to Kafka is really closed before the produce, so the event is never sent.',
    watch: 'Watch "never published" go up: the order exists and the warehouse never hears of it.',
    scenario: 'network_after_commit',
  },
  {
    name: 'naive.crash_before_commit',
    label: 'Crash before commit',
    kind: 'shot',
    appliesTo: 'naive',
    description:
      'In naive mode Kafka acknowledges the event and order-api dies before COMMIT, so the order is rolled back while its event is already out.',
    watch:
      'Watch "phantom events" go up and order-api restart: the consumer received an event about an order that does not exist.',
    scenario: 'network_after_publish',
  },
  {
    name: 'worker.kill_mid_publish',
    label: 'Kill worker mid-publish',
    kind: 'shot',
    appliesTo: 'outbox',
    description:
      'A publisher-worker exits after the broker acknowledged its batch and before UPDATE sent_at, so after the restart it publishes the same batch again (at-least-once).',
    watch:
      'Watch the worker go down and restart, and "duplicates caught by the inbox" rise while "double-processed" stays 0.',
    scenario: null,
  },
  {
    name: 'worker.kafka_outage',
    label: 'Kafka outage 10 s',
    kind: 'window',
    appliesTo: 'outbox',
    description:
      'The workers\u2019 sockets to Kafka are refused for N seconds while orders keep committing with their events in the outbox.',
    watch:
      'Watch "outbox pending" and the lag grow during the outage and drain after it, with nothing lost.',
    scenario: null,
  },
  {
    name: 'consumer.crash_before_offset_commit',
    label: 'Crash consumer before offset commit',
    kind: 'shot',
    appliesTo: 'both',
    description:
      'inventory-consumer commits its database transaction and dies before committing the Kafka offset, so Kafka redelivers the message after the restart.',
    watch:
      'Watch the consumer restart and the redelivered event appear in the feed marked as caught by the inbox.',
    scenario: null,
  },
  {
    name: 'consumer.inbox_off',
    label: 'Disable inbox',
    kind: 'switch',
    appliesTo: 'both',
    description:
      'The consumer stops recording events in the inbox, so a duplicate delivery reserves the stock a second time.',
    watch:
      'With a duplicate source on (kill worker, crash consumer) watch "double-processed" rise: this is what the inbox prevents.',
    scenario: null,
  },
  {
    name: 'worker.unsharded',
    label: 'Run 2 unsharded workers',
    kind: 'switch',
    appliesTo: 'outbox',
    description:
      'Both workers claim from the whole outbox instead of their own shards, so two events of one order can be published out of order.',
    watch:
      'Watch the replicas lose their shards and "FIFO violations" appear under traffic; switch it off and they stop.',
    scenario: null,
  },
  {
    name: 'connect.kill_mid_stream',
    label: 'Kill Kafka Connect mid-stream',
    kind: 'shot',
    appliesTo: 'cdc',
    description:
      'With Debezium publishing, Kafka Connect is killed (SIGKILL) and started again: it resumes from the offsets it last flushed, so it publishes again what followed them.',
    watch:
      'Watch the slot lag jump and fall, and "duplicates caught by the inbox" rise while "double-processed" stays 0.',
    scenario: null,
  },
  {
    name: 'connect.down',
    label: 'Connect down 60 s',
    kind: 'window',
    appliesTo: 'cdc',
    description:
      'Kafka Connect is stopped for 60 s while orders keep committing: nobody reads the replication slot, so PostgreSQL keeps every byte of WAL since its last confirmed position.',
    watch:
      'Watch "WAL retained" and the slot lag grow for a minute, then drain once Connect is back, with nothing lost.',
    scenario: null,
  },
  {
    name: 'broker.kill_leader',
    label: 'Kill the partition leader',
    kind: 'shot',
    appliesTo: 'cluster',
    description:
      'The broker leading the busiest partition of orders.events is killed (SIGKILL) and started again 10 s later; a follower in the ISR takes over, and the relay’s sends in flight fail and are retried.',
    watch:
      'Watch the partition’s leader change and the ISR shrink, then grow back when the broker returns; with acks = all nothing is lost (at most duplicates, caught by the inbox).',
    scenario: null,
  },
  {
    name: 'broker.stop_follower',
    label: 'Stop a follower 20 s',
    kind: 'window',
    appliesTo: 'cluster',
    description:
      'A follower of the busiest partition is frozen (SIGSTOP) for N seconds: it copies nothing, the leader drops it from the ISR, and 2 in-sync replicas still satisfy min.insync.replicas.',
    watch:
      'Watch the ISR shrink to 2 and publishing go on; after the resume the follower catches up and rejoins the ISR.',
    scenario: null,
  },
  {
    name: 'broker.kill_leader_unreplicated',
    label: 'Kill the leader before replication',
    kind: 'shot',
    appliesTo: 'cluster',
    description:
      'The busiest partition’s followers are frozen so they copy nothing, a few seconds of traffic go to the leader alone, the leader is killed and the followers resumed: one of them is elected without those batches, and the old leader truncates them when it returns.',
    watch:
      'With acks = 1 (unsafe) watch "never published" rise: events the outbox marked sent are gone. With acks = all the same click loses nothing: the sends wait, the relay retries.',
    scenario: null,
  },
];
