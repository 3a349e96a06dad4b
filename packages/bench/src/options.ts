/** The scenarios, in the order of the issue; `--only a,b` picks some. */
export const SCENARIOS = [
  'ceilings',
  'drain',
  'latency',
  'wakeup',
  'api',
  'growth',
  'inbox',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface BenchOptions {
  quick: boolean;
  only: ScenarioName[];
}

/** `--quick`, `--only <name[,name…]>` (repeatable). Fails naming what it does not know. */
export function parseOptions(argv: string[]): BenchOptions {
  const only: ScenarioName[] = [];
  let quick = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--quick') quick = true;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg === '--only' ? argv[++i] : arg.slice('--only='.length);
      for (const name of (value ?? '').split(',').filter(Boolean)) {
        if (!(SCENARIOS as readonly string[]).includes(name)) {
          throw new Error(`unknown scenario "${name}"; known: ${SCENARIOS.join(', ')}`);
        }
        only.push(name as ScenarioName);
      }
    } else
      throw new Error(`unknown option ${arg}; use --quick and/or --only <${SCENARIOS.join('|')}>`);
  }
  return { quick, only: only.length > 0 ? only : [...SCENARIOS] };
}
