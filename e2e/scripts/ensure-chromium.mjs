#!/usr/bin/env node
// The e2e specs drive Debian's Chromium (`npx playwright install` cannot download a
// browser here). Installs it through apt-get when it is missing; CHROMIUM_PATH points
// elsewhere when a machine has it in another place.
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (existsSync(path)) process.exit(0);
if (process.env.CHROMIUM_PATH) {
  console.error(`CHROMIUM_PATH=${path} does not exist`);
  process.exit(1);
}
if (typeof process.getuid === 'function' && process.getuid() !== 0) {
  console.error('chromium is missing: run `apt-get update && apt-get install -y chromium` as root');
  process.exit(1);
}
console.error('[e2e] installing chromium (apt-get)…');
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
execSync('apt-get update -q && apt-get install -y -q chromium', { stdio: 'inherit', env });
if (!existsSync(path)) {
  console.error(`apt-get installed chromium but ${path} is still missing`);
  process.exit(1);
}
