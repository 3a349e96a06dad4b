import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { commandLine, stackStatus, startStack } from '@outbox/dev-stack';
import type { BenchContext, ScenarioResult } from './env/context.ts';
import { dropLeftovers } from './env/db.ts';
import { deleteTopics, kafkaClient } from './env/kafka.ts';
import { machineFacts } from './env/versions.ts';
import { parseOptions, SCENARIOS, USAGE, type ScenarioName } from './options.ts';
import { renderChart } from './report/chart.ts';
import { writeResultsMarkdown } from './report/results-md.ts';
import { benchApi } from './scenarios/api.ts';
import { benchCeilings } from './scenarios/ceilings.ts';
import { benchConsumer } from './scenarios/consumer.ts';
import { benchDrain } from './scenarios/drain.ts';
import { benchGrowth } from './scenarios/growth.ts';
import { benchInbox } from './scenarios/inbox.ts';
import { benchLatency } from './scenarios/latency.ts';
import { benchWakeupScenario } from './scenarios/wakeup.ts';
import { benchWal } from './scenarios/wal.ts';
import { benchMarkSent } from './scenarios/mark-sent.ts';

/**
 * `npm run bench [-- --quick] [-- --only <scenario>]`: runs the scenarios on the real
 * local stack, prints a table per scenario, writes every raw sample to
 * packages/bench/results/ (JSON + SVG chart), and after a full run of every scenario
 * rewrites RESULTS.md. --quick only shows that each scenario still works: short runs,
 * one round, nothing asserted about speed; any scenario that errors fails the run.
 */
const cli = commandLine('bench', USAGE, process.argv.slice(2));
const options = cli.parse(() => parseOptions(process.argv.slice(2)));
const started = Date.now();
const progress = (line: string) =>
  process.stderr.write(`… [${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);

const stack = await startStack({ log: progress });
if (options.cpuProfDir) process.env.BENCH_CPU_PROF_DIR = options.cpuProfDir;
const ctx: BenchContext = {
  databaseUrl: stack.databaseUrl,
  kafkaBrokers: stack.kafkaBrokers,
  kafkaPid: (await stackStatus()).kafka.pid,
  quick: options.quick,
  progress,
  rounds: options.rounds,
  variants: options.variants,
  trace: options.trace,
  shared: {},
};
const RUNNERS: Record<ScenarioName, (c: BenchContext) => Promise<ScenarioResult>> = {
  ceilings: benchCeilings,
  drain: benchDrain,
  latency: benchLatency,
  wakeup: benchWakeupScenario,
  api: benchApi,
  growth: benchGrowth,
  inbox: benchInbox,
  consumer: benchConsumer,
  wal: benchWal,
  marksent: benchMarkSent,
};

const leftovers = await dropLeftovers(ctx.databaseUrl);
if (leftovers.length > 0)
  progress(`dropped schemas left by an interrupted run: ${leftovers.join(', ')}`);
await deleteTopics(kafkaClient(ctx.kafkaBrokers, 'bench-runner'), 'bench.').catch(() => undefined);
const machine = await machineFacts(ctx.databaseUrl);
const loadBefore = loadavg();
const results: Partial<Record<ScenarioName, ScenarioResult & { seconds: number }>> = {};
const failures: string[] = [];
for (const name of options.only) {
  const t0 = Date.now();
  progress(`scenario ${name}: starting`);
  try {
    const result = await RUNNERS[name](ctx);
    results[name] = { ...result, seconds: (Date.now() - t0) / 1000 };
    if (name === 'ceilings') ctx.shared.ceilings = result.data;
    console.log(`\n## ${result.title}\n\n${result.table}\n`);
    progress(`scenario ${name}: done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  } catch (error) {
    failures.push(name);
    progress(
      `scenario ${name} FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
  }
}

const date = new Date().toISOString();
const command = `npm run bench${options.quick ? ' -- --quick' : ''}${
  options.only.length < SCENARIOS.length ? ` -- --only ${options.only.join(',')}` : ''
}`;
const report = {
  date,
  command,
  quick: options.quick,
  durationSeconds: (Date.now() - started) / 1000,
  machine: {
    ...machine,
    cores: cpus().length,
    loadAverageBefore: loadBefore,
    loadAverageAfter: loadavg(),
  },
  scenarios: results,
  failures,
};
const dir = join(import.meta.dirname, '..', 'results');
mkdirSync(dir, { recursive: true });
const stamp = `${options.quick ? 'quick-' : ''}${date.replace(/[:.]/g, '-')}`;
const file = join(dir, `bench-${stamp}.json`);
writeFileSync(file, JSON.stringify(report, null, 2));
const svg = await renderChart(Object.values(results));
const chartFile = join(dir, `bench-${stamp}.svg`);
writeFileSync(chartFile, svg);
console.log(`raw samples: ${file}\nchart: ${chartFile}`);
console.log(`total: ${fmtSeconds(report.durationSeconds)}`);
const complete = options.only.length === SCENARIOS.length && options.variants.length === 0;
if (!options.quick && complete && failures.length === 0) {
  writeResultsMarkdown(join(import.meta.dirname, '..', 'RESULTS.md'), report, results);
  writeFileSync(join(import.meta.dirname, '..', 'RESULTS.svg'), svg);
  console.log('RESULTS.md and RESULTS.svg rewritten');
}
if (failures.length > 0) {
  console.error(`failed scenarios: ${failures.join(', ')}`);
  process.exit(1);
}
process.exit(0);

function fmtSeconds(s: number): string {
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}
