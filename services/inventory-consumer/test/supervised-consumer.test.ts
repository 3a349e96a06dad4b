import { EventEmitter } from 'node:events';
import { silentLogger } from '@outbox/core';
import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { ConsumerHealth } from '../src/health.ts';
import { SupervisedConsumer } from '../src/supervised-consumer.ts';

/**
 * The supervisor's decisions, pure logic: when it rebuilds, how often, what /healthz's
 * state says meanwhile, and that stop() ends it. A scripted stand-in plays kafkajs'
 * consumer (its events, commits that fail as kafkajs' fail); what the broker does is
 * tested on 3 real brokers in coordinator.cluster.test.ts and the demo's lesson.
 */
class ScriptedConsumer {
  readonly events = {
    GROUP_JOIN: 'consumer.group_join',
    REBALANCING: 'consumer.rebalancing',
    FETCH_START: 'consumer.fetch_start',
    FETCH: 'consumer.fetch',
    CRASH: 'consumer.crash',
    STOP: 'consumer.stop',
  } as const;
  private readonly emitter = new EventEmitter();
  commitError: Error | undefined;
  disconnects = 0;
  running = false;

  on(event: string, listener: (e: unknown) => void): () => void {
    this.emitter.on(event, listener);
    return () => this.emitter.off(event, listener);
  }
  emit(event: string, payload: unknown = {}): void {
    this.emitter.emit(event, { payload });
  }
  async connect() {}
  async subscribe() {}
  async run() {
    this.running = true;
  }
  async disconnect() {
    this.disconnects += 1;
    this.running = false;
    this.emit(this.events.STOP);
  }
  async commitOffsets() {
    if (this.commitError) throw this.commitError;
  }
}

/** A commit refused as kafkajs refuses it: NOT_COORDINATOR inside retries inside a wrapper. */
function notCoordinator(): Error {
  const protocol = Object.assign(new Error('This is not the correct coordinator for this group'), {
    type: 'NOT_COORDINATOR_FOR_GROUP',
  });
  const retries = Object.assign(new Error(protocol.message), { cause: protocol });
  return Object.assign(new Error(protocol.message), { cause: retries });
}

function setup() {
  const built: ScriptedConsumer[] = [];
  const kafka = {
    consumer: () => {
      const c = new ScriptedConsumer();
      built.push(c);
      return c as unknown as Consumer;
    },
  } as unknown as Kafka;
  const health = new ConsumerHealth({} as Admin, {
    groupId: 'g',
    topic: 't',
    stallMs: 60_000,
    probeMs: 60_000,
    log: silentLogger,
  });
  let commit: (() => Promise<void>) | undefined;
  const supervised = new SupervisedConsumer({
    kafka,
    consumerConfig: { groupId: 'g' },
    topic: 't',
    handler: (commitOffsets) => {
      commit = () => commitOffsets([{ topic: 't', partition: 0, offset: '1' }]);
      return async (_payload: EachBatchPayload) => undefined;
    },
    health,
    log: silentLogger,
    restartDelayMs: 10,
  });
  return { built, health, supervised, commit: () => commit!() };
}

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 200 && !check(); i += 1) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error(`never: ${what}`);
};

describe('SupervisedConsumer: a consumer that commits to a broker that is not the coordinator', () => {
  it('is rebuilt once after two refusals in a row, not after one; /healthz says restarting until the new one joins', async () => {
    const { built, health, supervised, commit } = setup();
    await supervised.start();
    const first = built[0]!;
    first.emit(first.events.GROUP_JOIN);
    expect(health.state).toBe('running');

    first.commitError = notCoordinator();
    await expect(commit()).rejects.toThrow(/not the correct coordinator/);
    expect(health.state).toBe('running');
    await new Promise((r) => setTimeout(r, 50));
    expect(built).toHaveLength(1);

    await expect(commit()).rejects.toThrow(/not the correct coordinator/);
    // A third refusal while the rebuild is pending starts no second one.
    await expect(commit()).rejects.toThrow(/not the correct coordinator/);
    expect(health.state).toBe('restarting');
    await until(() => built.length === 2, 'a new consumer');
    const second = built[1]!;
    await until(() => second.running, 'the new consumer running');
    expect(first.disconnects).toBe(1);
    // The old consumer's STOP (on its disconnect) and any late event no longer count.
    first.emit(first.events.GROUP_JOIN);
    expect(health.state).toBe('restarting');
    second.emit(second.events.GROUP_JOIN);
    expect(health.state).toBe('running');
    expect(health.restarts).toBe(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(built).toHaveLength(2);
    await supervised.stop();
  });

  it('a commit that succeeds in between resets the count; other refusals never rebuild', async () => {
    const { built, supervised, commit } = setup();
    await supervised.start();
    const first = built[0]!;
    first.commitError = notCoordinator();
    await expect(commit()).rejects.toThrow();
    first.commitError = undefined;
    await commit();
    first.commitError = notCoordinator();
    await expect(commit()).rejects.toThrow();
    first.commitError = Object.assign(new Error('The coordinator is not aware of this member'), {
      type: 'UNKNOWN_MEMBER_ID',
    });
    await expect(commit()).rejects.toThrow();
    await expect(commit()).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 50));
    expect(built).toHaveLength(1);
    await supervised.stop();
  });

  it('stop() during a pending rebuild ends it: no consumer is left running', async () => {
    const { built, supervised, commit } = setup();
    await supervised.start();
    const first = built[0]!;
    first.commitError = notCoordinator();
    await expect(commit()).rejects.toThrow();
    await expect(commit()).rejects.toThrow();
    await supervised.stop();
    expect(built.filter((c) => c.running)).toEqual([]);
  });
});
