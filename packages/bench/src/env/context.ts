/** What every scenario gets from the runner. */
export interface BenchContext {
  databaseUrl: string;
  kafkaBrokers: string[];
  /** The local broker's pid, for CPU accounting (null when external). */
  kafkaPid: number | null;
  /** --quick: one short round per figure, only to show the scenario still works. */
  quick: boolean;
  /** A line of progress on stderr. */
  progress: (line: string) => void;
  /** Repetitions of each figure (3 in full mode, 1 in quick mode). */
  rounds: number;
  /** Only these variant keys, when not empty (--variant, for development). */
  variants: string[];
  /** Publishers report where their wall time went (--trace, for development). */
  trace: boolean;
  /** Results later scenarios use (the ceilings, for the drain's ratio). */
  shared: { ceilings?: unknown };
}

/** The result of one scenario: its table(s) for people, everything for the JSON. */
export interface ScenarioResult {
  title: string;
  /** Markdown: a table, optionally followed by notes. */
  table: string;
  /** Raw samples and summaries. */
  data: unknown;
  /** Bars for the chart: a ratio (1 = the reference) per variant. */
  chart?: { label: string; value: number; target?: number }[];
  chartTitle?: string;
}

/** The variants to run: all, or those picked with --variant. */
export function pick<V extends { key: string }>(ctx: BenchContext, variants: readonly V[]): V[] {
  if (ctx.variants.length === 0) return [...variants];
  const picked = variants.filter((v) => ctx.variants.includes(v.key));
  return picked.length > 0 ? picked : [...variants];
}
