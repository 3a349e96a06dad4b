import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findRepoRoot } from '../src/paths.ts';

const root = findRepoRoot();

/** Every command a user types, as `npm run <name> -- …` runs it (through tsx, from its package). */
const COMMANDS: { name: string; entry: string; bad: string[][] }[] = [
  { name: 'stack', entry: 'packages/dev-stack/src/cli.ts', bad: [['bogus'], ['up', 'extra']] },
  { name: 'demo', entry: 'packages/demo/src/main.ts', bad: [['--nope'], ['--rate', 'x']] },
  {
    name: 'chaos',
    entry: 'packages/demo/src/chaos-cli.ts',
    bad: [
      ['bogus'],
      ['arm', 'no.such.point', 'on'],
      ['arm', 'worker.kill_mid_publish', 'times', '0'],
      ['relay', 'kafka-streams'],
    ],
  },
  {
    name: 'ops',
    entry: 'packages/ops/src/cli.ts',
    bad: [['--nope'], ['wat'], ['cleanup', '--outbox-retention', '7x'], ['requeue']],
  },
  { name: 'bench', entry: 'packages/bench/src/main.ts', bad: [['--help-me'], ['--only', 'x']] },
  { name: 'soak', entry: 'packages/soak/src/cli.ts', bad: [['--nope'], ['--rate', 'x']] },
];

function run(entry: string, args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', join(root, entry), ...args], {
    cwd: join(root, entry, '..', '..'),
    encoding: 'utf8',
    // Nothing here may reach a stack: a command that got past its checks would hang.
    timeout: 30_000,
    env: {
      ...process.env,
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      KAFKA_BROKERS: '127.0.0.1:1',
    },
  });
}

describe.each(COMMANDS)('npm run $name', ({ name, entry, bad }) => {
  it('prints its usage for --help and exits 0', () => {
    const result = run(entry, ['--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^usage: /);
    expect(result.stdout.split('\n').length).toBeGreaterThan(3);
  });

  it.each(bad)(
    'answers a bad option or value (%s …) with one line and the usage, exit 2',
    (...args) => {
      const result = run(entry, args);
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`^${name}: .+\\nusage: `));
      expect(result.stderr).not.toMatch(/\n\s+at /);
    },
  );
});
