/** What every scenario gets from the runner. */
export interface BenchContext {
  databaseUrl: string;
  kafkaBrokers: string[];
  /** --quick: one short round per figure, only to show the scenario still works. */
  quick: boolean;
  /** A line of progress on stderr. */
  progress: (line: string) => void;
  /** Repetitions of each figure (3 in full mode, 1 in quick mode). */
  rounds: number;
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
