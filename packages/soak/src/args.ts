import { parseArgs } from 'node:util';
import { FAULT_KINDS, parseFaultKinds, type FaultKind } from './schedule.ts';

export const USAGE_LINE =
  'usage: npm run soak -- [--minutes N] [--rate R] [--seed S] [--fault-every S] [--faults K,K…] [--drain-timeout S] [--keep-stack] [--json]';

export const USAGE = `${USAGE_LINE}

The chaos soak: the whole backend on a PostgreSQL and a broker of its own (.data/soak),
steady traffic in outbox mode, a seeded schedule of faults, then the drain and the audit.
Exit code 0 when every invariant held, 1 when one broke, 2 for a bad command line.

  --minutes N        minutes of traffic (default 10)
  --rate R           orders per second, 1–2000 (default 100)
  --seed S           the fault schedule is a function of it (default 1)
  --fault-every S    mean seconds between two faults (default 20; each gap 0.5–1.5 × S)
  --faults K,K…      only these fault kinds (default all of them, below)
  --drain-timeout S  seconds the system may take to drain once traffic stops (default 300)
  --keep-stack       leave the soak's PostgreSQL and broker running afterwards
  --json             print the report as JSON
  --help             this text

Fault kinds:
${FAULT_KINDS.map((k) => `  ${k}`).join('\n')}`;

/** A command-line mistake: the CLI prints it with the usage line, not a stack trace. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface SoakArgs {
  minutes: number;
  rate: number;
  seed: number;
  faultEverySeconds: number;
  kinds: FaultKind[] | undefined;
  drainTimeoutSeconds: number;
  keepStack: boolean;
  json: boolean;
}

/** Parses the soak's command line; `help` when --help was given. Throws UsageError. */
export function parseSoakArgs(argv: string[]): SoakArgs | 'help' {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        minutes: { type: 'string', default: '10' },
        seed: { type: 'string', default: '1' },
        rate: { type: 'string', default: '100' },
        'fault-every': { type: 'string', default: '20' },
        faults: { type: 'string' },
        'drain-timeout': { type: 'string', default: '300' },
        'keep-stack': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }).values;
  } catch (error) {
    // node's messages run to three lines for one mistake: one line is enough here.
    throw new UsageError((error as Error).message.replace(/\s*\n\s*/g, ' '));
  }
  if (values.help) return 'help';
  const number = (name: string, text: string, { integer = false, max = Infinity } = {}) => {
    const n = Number(text);
    if (
      !text.trim() ||
      !Number.isFinite(n) ||
      n <= 0 ||
      n > max ||
      (integer && !Number.isInteger(n))
    )
      throw new UsageError(
        `--${name} must be a positive ${integer ? 'integer' : 'number'}${max < Infinity ? ` up to ${max}` : ''} (got "${text}")`,
      );
    return n;
  };
  let kinds: FaultKind[] | undefined;
  try {
    kinds = values.faults === undefined ? undefined : parseFaultKinds(values.faults);
  } catch (error) {
    throw new UsageError(`--faults: ${(error as Error).message} (see --help for the kinds)`);
  }
  return {
    minutes: number('minutes', values.minutes),
    rate: number('rate', values.rate, { max: 2_000 }),
    seed: number('seed', values.seed, { integer: true }),
    faultEverySeconds: number('fault-every', values['fault-every']),
    kinds,
    drainTimeoutSeconds: number('drain-timeout', values['drain-timeout']),
    keepStack: values['keep-stack'],
    json: values.json,
  };
}
