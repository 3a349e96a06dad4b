import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { demoTopics, FailurePoint, type FailurePoints } from '@outbox/lab';
import {
  auditUntil,
  startScenarioSystem,
  undelivered,
  waitRestarted,
  type OrderClient,
} from './support/scenario.ts';
import type { System } from '../src/index.ts';

const restartsOf = (system: System, prefix: string) =>
  system.supervisor
    .status()
    .filter((s) => s.name.startsWith(prefix))
    .reduce((n, s) => n + s.restarts, 0);

async function waitRestartCount(system: System, prefix: string, atLeast: number): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (restartsOf(system, prefix) < atLeast) {
    if (Date.now() > deadline) throw new Error(`${prefix}* not restarted ${atLeast}×`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * At-least-once delivery and the inbox, on the whole backend as real processes, judged
 * by the auditor. The cases run in order on one system: each compares the audit with
 * the one before it. The last one switches the inbox off, on purpose.
 */
describe('at-least-once delivery and the inbox (auditor)', () => {
  let system: System;
  let points: FailurePoints;
  let orders: OrderClient;

  beforeAll(async () => {
    ({ system, points, orders } = await startScenarioSystem('inbox'));
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('kill mid-publish: the batch is published again, the inbox catches the duplicates, nothing is reserved twice', async () => {
    const restarts = restartsOf(system, 'publisher-worker');
    await points.arm(FailurePoint.workerKillMidPublish, { mode: 'once' });
    const created = await orders.createMany('outbox', 20);
    expect(created.every((r) => r.status === 201)).toBe(true);
    await waitRestartCount(system, 'publisher-worker', restarts + 1);
    const report = await auditUntil(
      system,
      (r) => r.pending === 0 && r.duplicatesCaught >= 1 && r.ordersWithoutEvents === 0,
    );
    expect(report.duplicatesDelivered).toBeGreaterThanOrEqual(1);
    expect(report.duplicatesCaught).toBe(report.duplicatesDelivered);
    expect(report.doubleProcessed).toBe(0);
    expect(report.reservationMismatches).toBe(0);
    // Sharded workers (the default): per-aggregate order holds through the crash.
    expect(report.fifoViolations).toBe(0);
  });

  it('consumer crash after its DB commit, before the offset commit: redelivered, caught by the inbox', async () => {
    const before = await auditUntil(system, (r) => r.pending === 0);
    const restarts = system.supervisor
      .status()
      .find((s) => s.name === 'inventory-consumer')!.restarts;
    await points.arm(FailurePoint.consumerCrashBeforeOffsetCommit, { mode: 'once' });
    await orders.createMany('outbox', 5);
    await waitRestarted(system, 'inventory-consumer', restarts + 1);
    const report = await auditUntil(
      system,
      (r) =>
        r.pending === 0 &&
        r.ordersWithoutEvents === 0 &&
        r.duplicatesCaught > before.duplicatesCaught,
    );
    expect(await undelivered(system, 'outbox')).toBe(0);
    expect(report.doubleProcessed).toBe(0);
    expect(report.fifoViolations).toBe(0);
  });

  it('a message the consumer cannot handle is dead-lettered and consumption goes on', async () => {
    const before = await auditUntil(system, (r) => r.pending === 0);
    const kafka = new Kafka({ brokers: system.kafkaBrokers, logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    // No event_id header, and a body that is not JSON: poison twice over.
    await producer.send({
      topic: demoTopics(system.topicPrefix).orders,
      messages: [{ key: 'poison', value: 'not json {', headers: { event_type: 'OrderCreated' } }],
    });
    await producer.disconnect();
    await orders.createMany('outbox', 3);
    const report = await auditUntil(
      system,
      (r) =>
        r.consumerDeadLettered === before.consumerDeadLettered + 1 &&
        r.pending === 0 &&
        r.ordersWithoutEvents === 0,
    );
    expect(await undelivered(system, 'outbox')).toBe(0);
    expect(report.doubleProcessed).toBe(0);
    const consumer = system.supervisor.status().find((s) => s.name === 'inventory-consumer')!;
    expect(consumer.state).toBe('up');
  });

  it('inbox off + kill mid-publish: the republished events reserve stock twice (the lesson of the inbox)', async () => {
    const before = await auditUntil(system, (r) => r.pending === 0);
    expect(before.doubleProcessed).toBe(0);
    const restarts = restartsOf(system, 'publisher-worker');
    await points.arm(FailurePoint.consumerInboxOff, { mode: 'on' });
    await points.arm(FailurePoint.workerKillMidPublish, { mode: 'once' });
    await orders.createMany('outbox', 20);
    await waitRestartCount(system, 'publisher-worker', restarts + 1);
    const report = await auditUntil(system, (r) => r.pending === 0 && r.doubleProcessed >= 1);
    expect(report.duplicatesDelivered).toBeGreaterThan(before.duplicatesDelivered);
    // Nothing caught them this time.
    expect(report.duplicatesCaught).toBe(before.duplicatesCaught);
    await points.arm(FailurePoint.consumerInboxOff, { mode: 'off' });
  });
});
