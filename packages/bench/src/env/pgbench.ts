import { spawnSync } from 'node:child_process';

/**
 * pgbench comes with Debian's postgresql-client. CI starts from a fresh machine, so the
 * benchmark installs it when it is missing and it may (root, apt-get present).
 */
export function ensurePgbench(progress: (line: string) => void): void {
  if (spawnSync('pgbench', ['--version']).status === 0) return;
  const root = process.getuid?.() === 0;
  if (!root || spawnSync('apt-get', ['--version']).status !== 0) {
    throw new Error('pgbench is not installed (apt-get install -y postgresql-client)');
  }
  progress('pgbench missing: apt-get install -y postgresql-client');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', 'postgresql-client']]) {
    const r = spawnSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (${r.status})`);
  }
  if (spawnSync('pgbench', ['--version']).status !== 0) {
    throw new Error('pgbench still missing after installing postgresql-client');
  }
}
