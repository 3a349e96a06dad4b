import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Supervisor, type ServiceStatus } from '../src/supervisor.ts';
import { isPidAlive } from '../src/process.ts';
import { waitFor } from '../src/wait.ts';

let logDir = '';
afterEach(async () => {
  if (logDir) await rm(logDir, { recursive: true, force: true });
});

describe('Supervisor', () => {
  it('restarts a crashing child with backoff and counts restarts', async () => {
    logDir = await mkdtemp(join(tmpdir(), 'dev-stack-sup-'));
    const changes: ServiceStatus[] = [];
    const sup = new Supervisor({ logDir, log: () => undefined, onChange: (s) => changes.push(s) });
    sup.add({
      name: 'crasher',
      command: process.execPath,
      args: ['-e', 'console.log("boom"); process.exit(1)'],
    });
    // Delays 200 + 400 ms: two restarts within ~1 s.
    await waitFor(async () => (sup.status()[0]?.restarts ?? 0) >= 2, {
      what: 'two restarts',
      timeoutMs: 10_000,
      intervalMs: 50,
    });
    expect(changes.some((c) => c.state === 'restarting')).toBe(true);
    await sup.stop();
    const [status] = sup.status();
    expect(status).toMatchObject({ name: 'crasher', state: 'down', pid: null });
    const log = await readFile(join(logDir, 'crasher.log'), 'utf8');
    expect(log.match(/boom/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
  });

  it('stop() terminates a long-running child and is idempotent', async () => {
    logDir = await mkdtemp(join(tmpdir(), 'dev-stack-sup-'));
    const sup = new Supervisor({ logDir, log: () => undefined, stopTimeoutMs: 2000 });
    const started = sup.add({
      name: 'sleeper',
      command: process.execPath,
      args: ['-e', 'setInterval(() => {}, 1000)'],
    });
    expect(started.state).toBe('up');
    const pid = started.pid;
    expect(isPidAlive(pid)).toBe(true);
    const first = sup.stop();
    expect(sup.stop()).toBe(first);
    await first;
    expect(isPidAlive(pid)).toBe(false);
    expect(sup.status()[0]).toMatchObject({ state: 'down', restarts: 0 });
    expect(() => sup.add({ name: 'late', command: 'true' })).toThrow(/stopped/);
  });
});
