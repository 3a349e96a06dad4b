import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseSoakArgs, USAGE_LINE } from '../src/index.ts';

const cwd = fileURLToPath(new URL('..', import.meta.url));
/** The CLI as `npm run soak` runs it (tsx), without a stack: these exit before one starts. */
const soak = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
  });

describe('npm run soak: the command line', () => {
  it('--help prints the usage and every fault kind, exit 0', () => {
    const run = soak('--help');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(USAGE_LINE);
    expect(run.stdout).toContain('postgres.outage');
    expect(run.stdout).toContain('worker.kafka_drop_responses');
  });

  it('through npm run soak, as a user types it: the message and the exit code, no pnpm noise', () => {
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    const run = spawnSync('npm', ['run', 'soak', '--', '--rate=-3'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual([
      'soak: --rate must be a positive number up to 2000 (got "-3")',
      USAGE_LINE,
    ]);
  });

  it.each([
    [['--bogus'], /Unknown option '--bogus'/],
    [['--rate', 'fast'], /--rate must be a positive number up to 2000 \(got "fast"\)/],
    [['--minutes', '0'], /--minutes must be a positive number/],
    [['--seed', '1.5'], /--seed must be a positive integer/],
    [['--faults', 'worker.sigkill,nope'], /--faults: unknown fault kind "nope"/],
    [['extra'], /Unexpected argument 'extra'/],
    [['--rate', '-3'], /Option '--rate' argument is ambiguous/],
  ])(
    '%j: a short message and the usage line on stderr, exit 2, no stack trace',
    (args, message) => {
      const run = soak(...args);
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).toContain(USAGE_LINE);
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(run.stderr.trim().split('\n')).toHaveLength(2);
      expect(run.stdout).toBe('');
    },
  );

  it('parses the options it documents, with the long run at 100 orders/s by default', () => {
    expect(parseSoakArgs([])).toMatchObject({ minutes: 10, rate: 100, seed: 1, kinds: undefined });
    expect(
      parseSoakArgs(['--minutes', '5', '--rate', '20', '--faults', 'postgres.outage', '--json']),
    ).toMatchObject({ minutes: 5, rate: 20, kinds: ['postgres.outage'], json: true });
    expect(parseSoakArgs(['--help'])).toBe('help');
  });
});
