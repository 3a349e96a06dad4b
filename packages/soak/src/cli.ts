import { parseArgs } from 'node:util';
import { formatReport, runSoak } from './soak.ts';

/**
 * `npm run soak -- --minutes N [--seed S] [--rate R] [--fault-every S] [--keep-stack] [--json]`
 * Exit code 0 when every invariant held, 1 otherwise.
 */
const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    seed: { type: 'string', default: '1' },
    rate: { type: 'string', default: '10' },
    'fault-every': { type: 'string', default: '20' },
    'drain-timeout': { type: 'string', default: '300' },
    'keep-stack': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const number = (name: keyof typeof values) => {
  const n = Number(values[name]);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
  return n;
};
const report = await runSoak({
  minutes: number('minutes'),
  seed: Math.floor(number('seed')),
  rate: number('rate'),
  faultEverySeconds: number('fault-every'),
  drainTimeoutSeconds: number('drain-timeout'),
  keepStack: values['keep-stack'],
});
console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
process.exit(report.ok ? 0 : 1);
