import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePrometheus, type PrometheusBinaries } from '@outbox/dev-stack';
import { beforeAll, describe, expect, it } from 'vitest';

const alerts = fileURLToPath(new URL('../alerts/', import.meta.url));
const rulesFile = join(alerts, 'outbox.rules.yml');
const testsFile = join(alerts, 'outbox.rules.test.yml');

function promtool(binaries: PrometheusBinaries, args: string[]) {
  const r = spawnSync(binaries.promtool, args, { encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/**
 * The alert rules as Prometheus itself reads them: `promtool check rules` (syntax,
 * PromQL, templates) and `promtool test rules` (outbox.rules.test.yml: each alert fed
 * the series the services export, pending before its `for:`, firing after, resolved).
 */
describe('alert rules under promtool (Debian prometheus 2.42)', () => {
  let binaries: PrometheusBinaries;
  beforeAll(() => {
    binaries = ensurePrometheus((line) => process.stderr.write(`[promtool] ${line}\n`));
  }, 300_000);

  it('promtool check rules: every rule parses', () => {
    const r = promtool(binaries, ['check', 'rules', rulesFile]);
    expect(r.output).toContain('SUCCESS: 8 rules found');
    expect(r.status).toBe(0);
  });

  it('promtool test rules: each alert pends, fires with its labels and text, and resolves', () => {
    const r = promtool(binaries, ['test', 'rules', testsFile]);
    expect(r.output).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });

  it('the unit tests can fail: a wrong expectation is reported with what the rule gave', () => {
    const dir = mkdtempSync(join(tmpdir(), 'promtool-'));
    copyFileSync(rulesFile, join(dir, 'outbox.rules.yml'));
    const tests = readFileSync(testsFile, 'utf8');
    const wrong = tests.replace('over 1000 events (1500)', 'over 1000 events (1501)');
    expect(wrong).not.toBe(tests);
    writeFileSync(join(dir, 'wrong.test.yml'), wrong);
    const r = promtool(binaries, ['test', 'rules', join(dir, 'wrong.test.yml')]);
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('summary="Outbox backlog over 1000 events (1500)"');
  });
});
