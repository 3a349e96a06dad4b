import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startStack } from '@outbox/dev-stack';
import { benchWakeup, wakeupTable } from './wakeup.ts';

/**
 * `npm run bench [-- --quick]`: runs the scenarios on the real local stack, prints a
 * table per scenario and writes every raw sample to packages/bench/results/.
 * --quick only shows the benchmark still works (short runs); it asserts nothing.
 */
const quick = process.argv.includes('--quick');
const progress = (line: string) => process.stderr.write(`… ${line}\n`);

const stack = await startStack({ log: progress });
const versions = await (async () => {
  const c = new pg.Client({ connectionString: stack.databaseUrl });
  await c.connect();
  const { rows } = await c.query<{ v: string }>('SHOW server_version');
  await c.end();
  return { postgres: rows[0]?.v, node: process.version };
})();

const wakeup = await benchWakeup(
  stack.databaseUrl,
  quick ? { rounds: 1, seconds: 2 } : { rounds: 3, seconds: 8, progress },
);
const report = {
  date: new Date().toISOString(),
  quick,
  machine: { cores: cpus().length },
  versions,
  scenarios: { wakeup },
};
console.log('\n## Writer cost of the wake-up (order + outbox tx/s, pgbench, 8 clients)\n');
console.log(wakeupTable(wakeup));
const dir = join(import.meta.dirname, '..', 'results');
mkdirSync(dir, { recursive: true });
const file = join(dir, `bench-${quick ? 'quick-' : ''}${report.date.replace(/[:.]/g, '-')}.json`);
writeFileSync(file, JSON.stringify(report, null, 2));
console.log(`\nraw samples: ${file}`);
