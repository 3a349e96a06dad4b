import { kafkaViewSchema, type KafkaView } from '@outbox/dashboard-api/contract';
import { describe, expect, it } from 'vitest';
import { armRequestWith, labelWithoutSeconds, notNow, secondsFrom } from '../src/live/applies.ts';
import {
  ACKS_TEXT,
  acksOf,
  brokerCount,
  clusterBlocked,
  clusterSummary,
  partitionRows,
  trackLeaderMoves,
} from '../src/live/kafka.ts';
import { highlightedRow } from '../src/live/highlight.ts';
import { trackHits } from '../src/live/hits.ts';
import { POLLING, statsMessage } from './stats-fixture.ts';

const NODES = [1, 2, 3].map((id) => ({ id, address: `127.0.0.1:1909${id}`, up: true }));

/** A contract-valid 3-broker view: 3 partitions led by 1, 2, 3, everything in sync. */
function cluster(over: Partial<KafkaView> = {}): KafkaView {
  return kafkaViewSchema.parse({
    brokers: 3,
    topic: 'orders.events',
    replicationFactor: 3,
    minInsyncReplicas: 2,
    nodes: NODES,
    partitions: [0, 1, 2].map((partition) => ({
      partition,
      leader: partition + 1,
      replicas: [partition + 1, ((partition + 1) % 3) + 1, ((partition + 2) % 3) + 1],
      isr: [partition + 1, ((partition + 1) % 3) + 1, ((partition + 2) % 3) + 1],
      messagesPerSecond: partition === 1 ? 12 : 3,
    })),
    busiestPartition: 1,
    reachable: true,
    ...over,
  });
}

const single = (): KafkaView =>
  kafkaViewSchema.parse({
    brokers: 1,
    topic: 'orders.events',
    replicationFactor: 1,
    minInsyncReplicas: 1,
    nodes: [{ id: 1, address: '127.0.0.1:9092', up: true }],
    partitions: [{ partition: 0, leader: 1, replicas: [1], isr: [1], messagesPerSecond: 5 }],
    busiestPartition: 0,
    reachable: true,
  });

const withPartition = (view: KafkaView, partition: number, over: object): KafkaView => ({
  ...view,
  partitions: view.partitions.map((p) => (p.partition === partition ? { ...p, ...over } : p)),
});

describe('brokers and the cluster points', () => {
  it('counts one broker when the server says nothing (an older server)', () => {
    expect(brokerCount(undefined)).toBe(1);
    expect(brokerCount(single())).toBe(1);
    expect(brokerCount(cluster())).toBe(3);
  });

  it('blocks a cluster point on one broker, naming the command; never blocks the others', () => {
    expect(clusterBlocked({ appliesTo: 'cluster' }, single())).toContain(
      'npm run demo -- --brokers 3',
    );
    expect(clusterBlocked({ appliesTo: 'cluster' }, undefined)).toContain('runs 1');
    expect(clusterBlocked({ appliesTo: 'cluster' }, cluster())).toBeNull();
    expect(clusterBlocked({ appliesTo: 'outbox' }, single())).toBeNull();
  });

  it('says why each kind of point does nothing now', () => {
    const ctx = { mode: 'outbox' as const, relay: 'polling' as const, kafka: single() };
    expect(notNow({ appliesTo: 'cluster' }, ctx)).toEqual({ kind: 'cluster', brokers: 1 });
    expect(notNow({ appliesTo: 'cluster' }, { ...ctx, kafka: cluster() })).toBeNull();
    expect(notNow({ appliesTo: 'naive' }, ctx)).toEqual({ kind: 'mode', needs: 'naive' });
    expect(notNow({ appliesTo: 'outbox' }, ctx)).toBeNull();
    expect(notNow({ appliesTo: 'cdc' }, ctx)).toEqual({ kind: 'cdc' });
    expect(notNow({ appliesTo: 'cdc' }, { ...ctx, relay: 'cdc' })).toBeNull();
    expect(notNow({ appliesTo: 'both' }, ctx)).toBeNull();
    // Before the first answer nothing is known: nothing is said.
    const unknown = { mode: undefined, relay: undefined, kafka: undefined };
    expect(notNow({ appliesTo: 'naive' }, unknown)).toBeNull();
  });

  it('takes the seconds of "Stop a follower" from its field, within what the API accepts', () => {
    expect(labelWithoutSeconds('Stop a follower 20 s')).toBe('Stop a follower');
    expect(labelWithoutSeconds('Kill the partition leader')).toBe('Kill the partition leader');
    expect(secondsFrom('30')).toBe(30);
    expect(secondsFrom(' 5 ')).toBe(5);
    for (const bad of ['', '0', '601', '2.5', '-3', 'ten']) expect(secondsFrom(bad)).toBeNull();
  });

  it("arms a window for the field's seconds, a shot once, and switches an open window off", () => {
    const follower = { kind: 'window' as const, name: 'broker.stop_follower' as const };
    const leader = { kind: 'shot' as const, name: 'broker.kill_leader' as const };
    expect(armRequestWith(follower, false, 30)).toEqual({ mode: 'on', seconds: 30 });
    expect(armRequestWith(follower, true, 30)).toEqual({ mode: 'off' });
    expect(armRequestWith(leader, false, undefined)).toEqual({ mode: 'once' });
    // No field: the point's default length.
    expect(armRequestWith(follower, false, undefined)).toMatchObject({ mode: 'on' });
  });
});

describe('partitionRows', () => {
  it('marks the leader, the followers in sync and the busiest partition', () => {
    const rows = partitionRows(cluster());
    expect(rows.map((r) => [r.partition, r.leader, r.health])).toEqual([
      [0, 1, 'ok'],
      [1, 2, 'ok'],
      [2, 3, 'ok'],
    ]);
    expect(rows[1]?.busiest).toBe(true);
    expect(rows.filter((r) => r.busiest)).toHaveLength(1);
    expect(rows[1]?.replicas).toEqual([
      { id: 2, state: 'leader' },
      { id: 3, state: 'in-sync' },
      { id: 1, state: 'in-sync' },
    ]);
  });

  it('marks a follower out of sync (stopped) and one whose broker is down', () => {
    // Broker 3 stopped: still in the metadata, dropped from the ISR.
    const stopped = withPartition(cluster(), 1, { isr: [2, 1] });
    const row = partitionRows(stopped)[1];
    expect(row?.outOfSync).toEqual([3]);
    expect(row?.replicas.find((r) => r.id === 3)?.state).toBe('out-of-sync');
    expect(row?.health).toBe('under-replicated');
    // Broker 1 killed: out of the metadata.
    const killed = { ...cluster(), nodes: NODES.map((n) => ({ ...n, up: n.id !== 1 })) };
    const partition0 = withPartition(killed, 0, { leader: 2, isr: [2, 3] });
    expect(partitionRows(partition0)[0]?.replicas.find((r) => r.id === 1)?.state).toBe('down');
  });

  it('tells offline (no leader) from fewer in sync than min.insync.replicas', () => {
    const offline = withPartition(cluster(), 1, { leader: null, isr: [] });
    expect(partitionRows(offline)[1]?.health).toBe('offline');
    const belowMin = withPartition(cluster(), 1, { isr: [2] });
    expect(partitionRows(belowMin)[1]?.health).toBe('below-min-isr');
    // Unknown min.insync.replicas: only under-replicated can be said.
    expect(partitionRows({ ...belowMin, minInsyncReplicas: null })[1]?.health).toBe(
      'under-replicated',
    );
  });

  it('sorts partitions by number whatever order the metadata lists them in', () => {
    const view = cluster();
    const shuffled = { ...view, partitions: [...view.partitions].reverse() };
    expect(partitionRows(shuffled).map((r) => r.partition)).toEqual([0, 1, 2]);
  });
});

describe('clusterSummary', () => {
  it('names the worst thing first: offline, then below min ISR, then under-replicated', () => {
    expect(clusterSummary(cluster())).toMatchObject({ tone: 'ok' });
    const under = withPartition(cluster(), 0, { isr: [1, 2] });
    expect(clusterSummary(under)).toMatchObject({ tone: 'warn' });
    expect(clusterSummary(under).text).toContain('1 partition is under-replicated');
    const below = withPartition(under, 1, { isr: [2] });
    expect(clusterSummary(below).text).toContain('acks = all writes are refused');
    const offline = withPartition(below, 2, { leader: null });
    expect(clusterSummary(offline)).toMatchObject({ tone: 'broken' });
    expect(clusterSummary(offline).text).toContain('offline');
  });

  it('says a broker is down, and when the state shown is the last known', () => {
    const down = { ...cluster(), nodes: NODES.map((n) => ({ ...n, up: n.id !== 2 })) };
    expect(clusterSummary(down).text).toContain('1 broker is down');
    expect(clusterSummary({ ...cluster(), reachable: false }).text).toContain('last known');
  });

  it('explains one broker, and an unknown view', () => {
    expect(clusterSummary(single()).text).toContain('One broker');
    expect(clusterSummary(undefined)).toMatchObject({ tone: 'unknown' });
  });
});

describe('trackLeaderMoves', () => {
  it('records a leader change with where it came from', () => {
    const before = cluster();
    const after = withPartition(before, 1, { leader: 3, isr: [3, 1] });
    const moves = trackLeaderMoves({}, before, after, '2026-12-07T10:00:01.000Z');
    expect(moves).toEqual({ 1: { from: 2, to: 3, at: '2026-12-07T10:00:01.000Z' } });
  });

  it('keeps the origin through a tick without a leader: 2 → none → 3 reads 2 → 3', () => {
    const a = cluster();
    const b = withPartition(a, 1, { leader: null, isr: [] });
    const c = withPartition(a, 1, { leader: 3, isr: [3] });
    let moves = trackLeaderMoves({}, a, b, 't1');
    expect(moves[1]).toEqual({ from: 2, to: null, at: 't1' });
    moves = trackLeaderMoves(moves, b, c, 't2');
    expect(moves[1]).toEqual({ from: 2, to: 3, at: 't2' });
  });

  it('moves nothing on an unreadable tick, a first message, or another topic (a reset demo)', () => {
    const a = cluster();
    const b = withPartition(a, 1, { leader: 3 });
    expect(trackLeaderMoves({}, a, { ...b, reachable: false }, 't')).toEqual({});
    expect(trackLeaderMoves({}, undefined, b, 't')).toEqual({});
    expect(trackLeaderMoves({}, a, { ...b, topic: 'other.orders.events' }, 't')).toEqual({});
    const same = {};
    expect(trackLeaderMoves(same, a, cluster(), 't')).toBe(same);
  });
});

describe('acks', () => {
  it("reads 'all' from a server that does not say (older servers), and what it is set to", () => {
    expect(acksOf(undefined)).toBeUndefined();
    const settings = statsMessage().settings;
    expect(acksOf(settings)).toBe('all');
    expect(acksOf({ ...settings, relay: POLLING, acks: '1' })).toBe('1');
  });

  it('marks acks = 1 unsafe and says what it loses', () => {
    expect(ACKS_TEXT['1'].label).toContain('UNSAFE');
    expect(ACKS_TEXT['1'].how).toMatch(/marked those rows sent, so nothing ever retries them/);
    expect(ACKS_TEXT.all.how).toContain('min.insync.replicas');
  });
});

describe('the broker rows of the scenario table', () => {
  const at = (s: number) => new Date(Date.UTC(2026, 11, 7, 10, 0, s)).toISOString();
  const inv = statsMessage().invariants;
  const settings = (acks: 'all' | '1') => ({ ...statsMessage().settings, acks });

  it('lights "the partition leader killed" when a leader moves on 3 brokers', () => {
    const m1 = statsMessage({ at: at(1), kafka: cluster(), settings: settings('all') });
    const m2 = statsMessage({
      at: at(2),
      kafka: withPartition(cluster(), 1, { leader: 3, isr: [3, 1] }),
      settings: settings('all'),
    });
    const hits = trackHits(trackHits({}, undefined, m1), m1, m2);
    expect(highlightedRow(m2, hits, false)).toMatchObject({
      row: 'leader_failover',
      detail: 'orders.events[1]: leader broker 2 → broker 3',
    });
    const later = statsMessage({
      at: new Date(Date.parse(at(2)) + 5 * 60_000 + 1).toISOString(),
      kafka: m2.kafka,
      settings: settings('all'),
    });
    expect(trackHits(hits, m2, later).leader_failover).toBeUndefined();
  });

  it('lights the acks = 1 loss when orders never published rise with acks = 1 only', () => {
    const lost = { ...inv, ordersWithoutEvents: 4, neverPublished: 4 };
    const m1 = statsMessage({ at: at(1), kafka: cluster(), settings: settings('1') });
    const m2 = statsMessage({
      at: at(2),
      kafka: cluster(),
      settings: settings('1'),
      invariants: lost,
    });
    const hits = trackHits(trackHits({}, undefined, m1), m1, m2);
    expect(highlightedRow(m2, hits, false)).toMatchObject({ row: 'acks_one_lost' });
    expect(hits.acks_one_lost?.detail).toContain('4 committed orders');
    // A reset (nothing lost any more) clears it.
    const m3 = statsMessage({ at: at(3), kafka: cluster(), settings: settings('1') });
    expect(trackHits(hits, m2, m3).acks_one_lost).toBeUndefined();
    // With acks = all, or on one broker, it is not this row.
    const all1 = statsMessage({ at: at(1), kafka: cluster(), settings: settings('all') });
    const all2 = statsMessage({
      at: at(2),
      kafka: cluster(),
      settings: settings('all'),
      invariants: lost,
    });
    expect(trackHits({}, all1, all2).acks_one_lost).toBeUndefined();
    const one1 = statsMessage({ at: at(1), kafka: single(), settings: settings('1') });
    const one2 = statsMessage({
      at: at(2),
      kafka: single(),
      settings: settings('1'),
      invariants: lost,
    });
    expect(trackHits({}, one1, one2).acks_one_lost).toBeUndefined();
    expect(trackHits({}, one1, one2).leader_failover).toBeUndefined();
  });
});
