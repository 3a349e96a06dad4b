import { seededRandom } from './prng.ts';

/**
 * Every fault the soak injects: failure points inside the processes, faults from
 * outside (signals, restarts), and the ambiguous ones a fault proxy makes on one
 * service's link (the server acted and the answer was lost; a link gone silent
 * without a reset; a slow link).
 */
export const FAULT_KINDS = [
  'worker.kill_mid_publish', // failure point: SIGKILL after the broker's ack, before UPDATE sent_at
  'worker.sigkill', // SIGKILL of a publisher-worker from outside, wherever it is
  'worker.sigstop', // SIGSTOP of a publisher-worker for ~12 s, then SIGCONT: a frozen process
  'worker.kafka_outage', // failure point: the worker's Kafka sockets cut for a few seconds
  'worker.kafka_drop_responses', // proxy: the relay's produce requests reach the broker, answers are lost
  'worker.kafka_black_hole', // proxy: a worker's Kafka link silent (no data, no reset)
  'worker.pg_black_hole', // proxy: a worker's PostgreSQL link silent
  'worker.pg_slow', // proxy: a worker's PostgreSQL link delays every chunk 200–800 ms
  'consumer.sigkill', // SIGKILL of the inventory-consumer from outside
  'consumer.crash_before_offset_commit', // failure point: dies after COMMIT, before the offset
  'consumer.kafka_black_hole', // proxy: the consumer's Kafka link silent (> 10 s: expelled from the group)
  'consumer.pg_black_hole', // proxy: the consumer's PostgreSQL link silent
  'consumer.pg_slow', // proxy: the consumer's PostgreSQL link delays every chunk 200–800 ms
  'order-api.sigkill', // SIGKILL of order-api with requests in flight
  'kafka.restart', // the broker SIGKILLed and started again
  'postgres.restart', // PostgreSQL stopped immediately (no checkpoint) and started again
  'postgres.outage', // PostgreSQL stopped immediately, 20–30 s down (the consumer's member is expelled), started
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface ScheduledFault {
  /** Milliseconds after traffic started. */
  atMs: number;
  kind: FaultKind;
  /** The publisher-worker replica a `worker.*` fault hits (1 or 2), else 0. */
  replica: number;
  /** How long the fault lasts, in seconds (0: an instant fault). */
  seconds: number;
  /** The delay of a `*.pg_slow` link in ms, else 0. */
  delayMs: number;
}

export interface ScheduleOptions {
  seed: number;
  durationMs: number;
  /** Mean gap between two faults (default 20 s); each gap is 0.5–1.5 × this. */
  meanGapMs?: number;
  /** Quiet time at the start and the end of the traffic (default 10 s). */
  marginMs?: number;
  /** Only these kinds, in this set (default every kind). */
  kinds?: readonly FaultKind[];
}

/** Seconds a fault lasts: [min, max] drawn uniformly (whole seconds), or fixed. */
const DURATION: Partial<Record<FaultKind, [number, number]>> = {
  'worker.sigstop': [10, 14],
  'worker.kafka_outage': [3, 8],
  'worker.kafka_drop_responses': [2, 5],
  'worker.kafka_black_hole': [5, 15],
  'worker.pg_black_hole': [5, 15],
  'worker.pg_slow': [10, 20],
  'consumer.kafka_black_hole': [5, 15],
  'consumer.pg_black_hole': [5, 15],
  'consumer.pg_slow': [10, 20],
  // The consumer's session timeout is 10 s: 20–30 s down expels its member for sure.
  'postgres.outage': [20, 30],
};

/** The kinds that hit one publisher-worker replica (the failure points hit whichever gets there). */
const ONE_REPLICA = new Set<FaultKind>([
  'worker.sigkill',
  'worker.sigstop',
  'worker.kafka_drop_responses',
  'worker.kafka_black_hole',
  'worker.pg_black_hole',
  'worker.pg_slow',
]);

/**
 * The fault schedule, a pure function of the seed: kinds come in shuffled rounds (every
 * kind once per round, so even a short run meets most of them), at seeded gaps.
 */
export function faultSchedule(options: ScheduleOptions): ScheduledFault[] {
  const random = seededRandom(options.seed);
  const kinds = options.kinds ?? FAULT_KINDS;
  if (kinds.length === 0) return [];
  const meanGap = options.meanGapMs ?? 20_000;
  const margin = options.marginMs ?? 10_000;
  const between = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const schedule: ScheduledFault[] = [];
  let round: FaultKind[] = [];
  for (let at = margin; at < options.durationMs - margin; at += meanGap * (0.5 + random())) {
    if (round.length === 0) {
      round = [...kinds];
      for (let i = round.length - 1; i > 0; i -= 1) {
        const j = Math.floor(random() * (i + 1));
        [round[i], round[j]] = [round[j]!, round[i]!];
      }
    }
    const kind = round.shift()!;
    const duration = DURATION[kind];
    schedule.push({
      atMs: Math.round(at),
      kind,
      replica: ONE_REPLICA.has(kind) ? between(1, 2) : 0,
      seconds: duration ? between(...duration) : 0,
      delayMs: kind.endsWith('.pg_slow') ? between(2, 8) * 100 : 0,
    });
  }
  return schedule;
}

/** One line for the log: `worker.pg_slow (replica 2, 14 s, 600 ms)`. */
export function describeFault(f: ScheduledFault): string {
  const details = [
    f.replica ? `replica ${f.replica}` : '',
    f.seconds ? `${f.seconds} s` : '',
    f.delayMs ? `${f.delayMs} ms` : '',
  ].filter(Boolean);
  return details.length ? `${f.kind} (${details.join(', ')})` : f.kind;
}

/** Parses a `--faults` list: kind names, comma-separated; throws naming an unknown one. */
export function parseFaultKinds(text: string): FaultKind[] {
  const kinds = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const kind of kinds)
    if (!(FAULT_KINDS as readonly string[]).includes(kind))
      throw new Error(`unknown fault kind "${kind}"`);
  if (kinds.length === 0) throw new Error('no fault kind given');
  return [...new Set(kinds)] as FaultKind[];
}
