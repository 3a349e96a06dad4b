import { seededRandom } from './prng.ts';

/** Every fault the soak injects: failure points inside the processes, and faults from outside. */
export const FAULT_KINDS = [
  'worker.kill_mid_publish', // failure point: SIGKILL after the broker's ack, before UPDATE sent_at
  'worker.sigkill', // SIGKILL of a publisher-worker from outside, wherever it is
  'worker.kafka_outage', // failure point: the worker's Kafka sockets cut for a few seconds
  'consumer.sigkill', // SIGKILL of the inventory-consumer from outside
  'consumer.crash_before_offset_commit', // failure point: dies after COMMIT, before the offset
  'order-api.sigkill', // SIGKILL of order-api with requests in flight
  'kafka.restart', // the broker SIGKILLed and started again
  'postgres.restart', // PostgreSQL stopped immediately (no checkpoint) and started again
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface ScheduledFault {
  /** Milliseconds after traffic started. */
  atMs: number;
  kind: FaultKind;
  /** worker.sigkill: which replica (1 or 2); worker.kafka_outage: seconds. */
  param: number;
}

export interface ScheduleOptions {
  seed: number;
  durationMs: number;
  /** Mean gap between two faults (default 20 s); each gap is 0.5–1.5 × this. */
  meanGapMs?: number;
  /** Quiet time at the start and the end of the traffic (default 10 s). */
  marginMs?: number;
}

/**
 * The fault schedule, a pure function of the seed: kinds come in shuffled rounds (every
 * kind once per round, so even a short run meets most of them), at seeded gaps.
 */
export function faultSchedule(options: ScheduleOptions): ScheduledFault[] {
  const random = seededRandom(options.seed);
  const meanGap = options.meanGapMs ?? 20_000;
  const margin = options.marginMs ?? 10_000;
  const schedule: ScheduledFault[] = [];
  let round: FaultKind[] = [];
  for (let at = margin; at < options.durationMs - margin; at += meanGap * (0.5 + random())) {
    if (round.length === 0) {
      round = [...FAULT_KINDS];
      for (let i = round.length - 1; i > 0; i -= 1) {
        const j = Math.floor(random() * (i + 1));
        [round[i], round[j]] = [round[j]!, round[i]!];
      }
    }
    const kind = round.shift()!;
    const param =
      kind === 'worker.sigkill'
        ? 1 + Math.floor(random() * 2)
        : kind === 'worker.kafka_outage'
          ? 3 + Math.floor(random() * 6)
          : 0;
    schedule.push({ atMs: Math.round(at), kind, param });
  }
  return schedule;
}
