import type { ScenarioId } from '../contract.ts';
import { SCENARIOS as SEED_SCENARIOS } from './seed-scenarios.ts';

/**
 * The scenario table: the seed's four dual-write cases ("Четыре возможных сценария при
 * сбое", from the contract), then the outbox's own at-least-once cases from the seed's
 * pitfalls. Each row says what happens and what the outbox + inbox do about it.
 */
export type RowId =
  | ScenarioId
  | 'outage'
  | 'consumer_stalled'
  | 'duplicate'
  | 'double_processed'
  | 'reordering'
  | 'leader_failover'
  | 'acks_one_lost';

export interface ScenarioRow {
  id: RowId;
  group: 'dual-write' | 'outbox';
  title: string;
  /** The seed's words, when the row is the seed's (tooltip). */
  seed?: string;
  db: string;
  kafka: string;
  /** What happens with the naive dual write (outbox group: without the fix). */
  consequence: string;
  /** What the outbox / inbox does about it. */
  fix: string;
  /** The button that reproduces it. */
  button?: string;
}

const FIX: Record<ScenarioId, { fix: string; button?: string }> = {
  happy_path: { fix: 'Same result, with one transaction instead of two writes.' },
  db_fail: { fix: 'ROLLBACK removes the order and its outbox row together.' },
  network_after_commit: {
    fix: 'The event was committed with the order, in the outbox; the relay retries until Kafka acks.',
    button: 'Network drop after commit',
  },
  network_after_publish: {
    fix: 'Nothing is published before COMMIT: the relay only ever reads committed rows.',
    button: 'Crash before commit',
  },
};

export const SCENARIO_ROWS: readonly ScenarioRow[] = [
  ...SEED_SCENARIOS.map((s): ScenarioRow => ({
    id: s.id,
    group: 'dual-write',
    title: s.label,
    seed: `${s.seedLabel}: ${s.seedConsequence}`,
    db: s.db,
    kafka: s.kafka,
    consequence: s.consequence,
    ...FIX[s.id],
  })),
  {
    id: 'outage',
    group: 'outbox',
    title: 'Kafka unreachable for a while',
    db: 'OK',
    kafka: 'FAIL, then OK',
    consequence: 'Naive: every order of the window loses its event.',
    fix: 'Pending and lag grow, then drain: late, never lost.',
    button: 'Kafka outage 10 s',
  },
  {
    id: 'consumer_stalled',
    group: 'outbox',
    title: 'The consumer stops consuming',
    db: 'OK',
    kafka: 'OK, waiting',
    consequence:
      'Orders have no applied event yet: published, not consumed. The group’s lag grows and its offsets stand still.',
    fix: 'Late, not lost: the events wait on the topic, and a consumer that moves again applies each once (the inbox).',
  },
  {
    id: 'duplicate',
    group: 'outbox',
    title: 'Worker dies after publish, before UPDATE sent_at',
    seed: 'Worker публикует, но не UPDATE (упал) -- дубли.',
    db: 'still pending',
    kafka: 'OK, twice',
    consequence: 'At-least-once: the batch is published again, the event arrives twice.',
    fix: 'The inbox (event_id PRIMARY KEY, ON CONFLICT DO NOTHING) skips the second copy.',
    button: 'Kill worker mid-publish',
  },
  {
    id: 'double_processed',
    group: 'outbox',
    title: 'Consumer not idempotent',
    seed: 'Consumer не идемпотентен -- at-least-once превратится в обработано N раз.',
    db: 'reserved twice',
    kafka: 'OK, twice',
    consequence: 'At-least-once becomes processed N times: stock is reserved twice.',
    fix: 'The inbox pattern is mandatory: the marker and the effect in one transaction.',
    button: 'Disable inbox',
  },
  {
    id: 'reordering',
    group: 'outbox',
    title: 'N workers without sharding',
    seed: 'FIFO нарушается при N workers без шардинга.',
    db: 'OK',
    kafka: 'out of order',
    consequence: "Worker B publishes an order's OrderPaid before worker A its OrderCreated.",
    fix: 'Shard by hash(aggregate_id) and use aggregate_id as the partition key.',
    button: 'Run 2 unsharded workers',
  },
  {
    id: 'leader_failover',
    group: 'outbox',
    title: 'acks = all, the partition leader killed (3 brokers)',
    db: 'OK',
    kafka: 'leader moves',
    consequence:
      'The sends in flight fail or time out; a follower in the ISR becomes leader with every acknowledged batch.',
    fix: 'Nothing is marked sent before min.insync.replicas (2 of 3) have it: the relay retries, at most duplicates (the inbox).',
    button: 'Kill the partition leader',
  },
  {
    id: 'acks_one_lost',
    group: 'outbox',
    title: 'acks = 1, leader killed before its followers copied the batch (3 brokers)',
    db: 'marked sent',
    kafka: 'acked, then gone',
    consequence:
      'The leader alone acknowledged the batch, the relay marked the rows sent, the new leader never had them: lost, and nothing retries them.',
    fix: 'acks = all (the relay’s default) with min.insync.replicas = 2: the broker’s half of the guarantee.',
    button: 'Kill the leader before replication',
  },
];

/** The table's cells are phrases; in the banner's running text each ends a sentence. */
export function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
