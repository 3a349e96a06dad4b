#!/usr/bin/env node
// Runs the pnpm pinned in package.json#packageManager without needing a global pnpm:
// through `npx` (npm reaches the registry here; corepack's signature keys on Node 20 can
// be too old for recent pnpm releases, so npx is the dependable route).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const { packageManager } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const result = spawnSync('npx', ['--yes', packageManager, ...process.argv.slice(2)], {
  stdio: 'inherit',
  cwd: root,
});
process.exit(result.status ?? 1);
