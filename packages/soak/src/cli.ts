import { parseSoakArgs, USAGE, USAGE_LINE, UsageError } from './args.ts';
import { formatReport, runSoak } from './soak.ts';

/**
 * `npm run soak -- [--minutes N] [--rate R] [--seed S] …` (`--help` for all of it).
 * Exit code 0 when every invariant held, 1 otherwise, 2 for a bad command line.
 */
let args;
try {
  args = parseSoakArgs(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`soak: ${error.message}\n${USAGE_LINE}\n`);
  process.exit(2);
}
if (args === 'help') {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const { json, ...options } = args;
const report = await runSoak(options);
console.log(json ? JSON.stringify(report, null, 2) : formatReport(report));
process.exit(report.ok ? 0 : 1);
