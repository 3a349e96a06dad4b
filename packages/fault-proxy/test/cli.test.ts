import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const run = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], { encoding: 'utf8' });

describe('fault-proxy command', () => {
  it('prints its usage for --help', () => {
    const result = run('--help');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^usage: fault-proxy --target/);
  });

  it('answers a bad option or value with a usage line, not a stack trace', () => {
    for (const args of [['--nope'], ['--target', 'nohost'], ['--target', 'a:1', '--mode', 'x']]) {
      const result = run(...args);
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(/^fault-proxy: .+\nusage: fault-proxy/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
