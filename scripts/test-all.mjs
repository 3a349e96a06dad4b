#!/usr/bin/env node
// Every package's `test` script, then the 3-broker tests (`test:cluster`: the demo's
// lessons, the dashboard's Kafka panel, the consumer's group coordinator).
//
// Default: one package after another in pnpm's order, as `npm test` (and .ci/run) has
// always run them; each package's files run in parallel inside vitest where they may.
//
// `--lanes`: the same in steps, two lanes side by side:
//   0. the shared dev-stack up (PostgreSQL, the broker, Kafka's jars from Maven on a
//      fresh clone), once: two lanes starting it at the same moment would race on its
//      data dir and jar cache;
//   1. side by side, two lanes that share no state:
//      - "own stacks": the soak, the e2e specs and the demo's 3-broker lessons, one
//        after another: the soak starts its own PostgreSQL and broker, and each of them
//        a 3-broker cluster of its own (one at a time: three JVMs each); e2e drives
//        Chromium;
//      - "shared stack": every other package but the bench, in pnpm's order;
//   2. then the bench's quick mode alone: its WAL scenario restarts the shared
//      PostgreSQL, which the other lanes use.
//   Each step of the "own stacks" lane writes to a log file printed when it ends.
//   Measured on two cores in fresh-clone runs: it saves less than expected (the lanes
//   share the same two cores: ~38 min against ~45 serial with the 3-broker tests), and
//   the load (average 10-23) pushed timing-bound tests past their limits in two runs
//   out of two, so it is not the default; on a machine with more cores it pays.
//
// Exits non-zero if any step failed, after every step has run.
// `node scripts/test-all.mjs --help` prints this.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pnpm = fileURLToPath(new URL('pnpm.mjs', import.meta.url));
const args = process.argv.slice(2);

if (args.includes('--help') || args.includes('-h')) {
  const text = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  const header = text.split('\n').filter((l) => l.startsWith('//'));
  console.log(header.map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(0);
}
const unknown = args.filter((a) => a !== '--lanes');
if (unknown.length > 0) {
  console.error(`test-all: unknown option ${unknown.join(' ')} (see --help)`);
  process.exit(2);
}

const OWN_STACKS = ['@outbox/soak', '@outbox/e2e'];
const ALONE_LAST = ['@outbox/bench'];

/** Runs pnpm with `pnpmArgs`; output to this process or to `logFile`. Resolves the exit code. */
function run(name, pnpmArgs, logFile) {
  const started = Date.now();
  console.log(`[test-all] ${name}: started`);
  const out = logFile ? createWriteStream(logFile) : undefined;
  const child = spawn(process.execPath, [pnpm, ...pnpmArgs], {
    cwd: root,
    stdio: ['ignore', out ? 'pipe' : 'inherit', out ? 'pipe' : 'inherit'],
  });
  if (out) {
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
  }
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      const seconds = Math.round((Date.now() - started) / 1000);
      const status = code ?? (signal ? `signal ${signal}` : 1);
      const finish = () => {
        if (logFile) process.stdout.write(readFileSync(logFile));
        console.log(`[test-all] ${name}: exit ${status} after ${seconds} s`);
        resolve(code === 0 ? 0 : 1);
      };
      if (out) out.end(finish);
      else finish();
    });
  });
}

const recursive = (filters, script = 'test') => [
  ...filters.flatMap((f) => ['--filter', f]),
  '-r',
  '--workspace-concurrency=1',
  '--if-present',
  'run',
  script,
];

let failed = 0;
if (!args.includes('--lanes')) {
  failed += await run('every package', recursive([]));
  failed += await run('3-broker lessons', recursive([], 'test:cluster'));
} else {
  const up = await run('dev-stack up', [
    '--filter',
    '@outbox/dev-stack',
    'exec',
    'tsx',
    'src/cli.ts',
    'up',
  ]);
  if (up !== 0) process.exit(1);
  const logDir = `${root}.data/logs`;
  mkdirSync(logDir, { recursive: true });
  const lanes = await Promise.all([
    run('shared stack', recursive([...OWN_STACKS, ...ALONE_LAST].map((name) => `!${name}`))),
    (async () => {
      let lane = 0;
      for (const name of OWN_STACKS)
        lane += await run(name, recursive([name]), `${logDir}/test-lane-${name.split('/')[1]}.log`);
      lane += await run(
        'test:cluster',
        recursive(
          ['@outbox/demo', '@outbox/dashboard-api', '@outbox/inventory-consumer'],
          'test:cluster',
        ),
        `${logDir}/test-lane-cluster.log`,
      );
      return lane;
    })(),
  ]);
  failed += lanes.reduce((a, b) => a + b, 0);
  failed += await run('bench (alone)', recursive(ALONE_LAST));
}
process.exit(failed === 0 ? 0 : 1);
