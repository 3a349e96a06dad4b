import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { ScenarioResult } from '../env/context.ts';

const BEGIN = '<!-- bench:begin (written by npm run bench; edit outside these markers) -->';
const END = '<!-- bench:end -->';

interface ReportHead {
  date: string;
  command: string;
  durationSeconds: number;
  machine: {
    cores: number;
    loadAverageBefore: number[];
    loadAverageAfter: number[];
    versions: Record<string, string>;
  };
}

/**
 * Rewrites the measured part of RESULTS.md (between the markers) with the tables of a
 * full run; the analysis around it (what limits a missed target) is kept as written.
 */
export function writeResultsMarkdown(
  file: string,
  report: ReportHead,
  results: Partial<Record<string, ScenarioResult>>,
): void {
  const m = report.machine;
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  const body = [
    BEGIN,
    '',
    `Measured ${report.date.slice(0, 10)} (${report.date}) with \`${report.command}\`, in ${Math.round(report.durationSeconds / 60)} min.`,
    `Machine: ${m.cores} cores; load average (1/5/15 min) ${load(m.loadAverageBefore)} before, ${load(m.loadAverageAfter)} after.`,
    `PostgreSQL: ${m.versions.postgres}. Kafka ${m.versions.kafka} (KRaft, one node). Node ${m.versions.node}, kafkajs ${m.versions.kafkajs}.`,
    '',
    ...Object.values(results).flatMap((r) => (r ? [`### ${r.title}`, '', r.table, ''] : [])),
    '![ratios](RESULTS.svg)',
    '',
    END,
  ].join('\n');
  const old = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const start = old.indexOf(BEGIN);
  const stop = old.indexOf(END);
  const next =
    start >= 0 && stop > start
      ? `${old.slice(0, start)}${body}${old.slice(stop + END.length)}`
      : `# Benchmark results\n\n${body}\n`;
  writeFileSync(file, next);
}
