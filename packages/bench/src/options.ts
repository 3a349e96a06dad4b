import { UsageError } from '@outbox/dev-stack';

/** The scenarios, in the order of the issue; `--only a,b` picks some. */
export const SCENARIOS = [
  'ceilings',
  'drain',
  'latency',
  'wakeup',
  'api',
  'growth',
  'inbox',
  'consumer',
  'wal',
  'marksent',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface BenchOptions {
  quick: boolean;
  only: ScenarioName[];
  /** --variant <key[,key…]>: run only these variants of a scenario (development). */
  variants: string[];
  /** --cpu-prof <dir>: child processes write V8 CPU profiles there (node --cpu-prof). */
  cpuProfDir?: string;
  /** --trace: publishers report where their wall time went. */
  trace: boolean;
  /** --rounds N: alternating rounds per scenario (default 3, 1 with --quick). */
  rounds: number;
}

/**
 * `--quick`, `--only <name[,name…]>`, and for development `--variant <key,…>` and
 * `--cpu-prof <dir>`. Fails naming what it does not know.
 */
export const USAGE = `usage: npm run bench -- [--quick] [--only <scenario[,scenario…]>]

Runs the benchmark scenarios on the real local stack, prints a table per scenario, writes
the raw samples to packages/bench/results/ and, after a full run, rewrites RESULTS.md.
  --quick              short runs, one round: shows each scenario still works (CI)
  --only a,b           only these scenarios: ${SCENARIOS.join(', ')}
  --variant k,…        only these variants of a scenario (development)
  --cpu-prof DIR       child processes write V8 CPU profiles to DIR
  --trace              publishers report where their wall time went
  --rounds N           alternating rounds of each scenario's variants (1–50; default 3,
                       1 with --quick): more rounds narrow a comparison on a busy machine`;

export function parseOptions(argv: string[]): BenchOptions {
  const only: ScenarioName[] = [];
  const variants: string[] = [];
  let cpuProfDir: string | undefined;
  let quick = false;
  let trace = false;
  let rounds: number | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--quick') quick = true;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg === '--only' ? argv[++i] : arg.slice('--only='.length);
      for (const name of (value ?? '').split(',').filter(Boolean)) {
        if (!(SCENARIOS as readonly string[]).includes(name)) {
          throw new UsageError(`unknown scenario "${name}"; known: ${SCENARIOS.join(', ')}`);
        }
        only.push(name as ScenarioName);
      }
    } else if (arg === '--trace') {
      trace = true;
    } else if (arg === '--variant') {
      variants.push(...(argv[++i] ?? '').split(',').filter(Boolean));
    } else if (arg === '--rounds') {
      const value = argv[++i];
      rounds = Number(value);
      if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50)
        throw new UsageError(`--rounds takes a whole number from 1 to 50, not "${value ?? ''}"`);
    } else if (arg === '--cpu-prof') {
      cpuProfDir = argv[++i];
      if (!cpuProfDir) throw new UsageError('--cpu-prof needs a directory');
    } else {
      throw new UsageError(`unknown option ${arg}`);
    }
  }
  return {
    quick,
    only: only.length > 0 ? only : [...SCENARIOS],
    variants,
    trace,
    rounds: rounds ?? (quick ? 1 : 3),
    ...(cpuProfDir ? { cpuProfDir } : {}),
  };
}
