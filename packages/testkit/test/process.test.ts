import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startService } from '../src/process.ts';

const fixture = fileURLToPath(new URL('./fixtures/ready-then-killed', import.meta.url));

describe('startService', () => {
  it('counts the ready line of a process that died right after printing it', async () => {
    // Line and exit reach the parent within one poll interval: the line must win.
    const service = await startService({}, { cwd: fixture, timeoutMs: 30_000 });
    expect(service.url).toBe('http://127.0.0.1:1');
    expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });
  });
});
