import { describe, expect, it } from 'vitest';
import { WakeSignal } from '../src/relay/wake-signal.ts';

/** Resolves to how the sleep ended: 'woke' if before `boundMs`, else 'timer'. */
async function endOf(sleep: Promise<void>, boundMs: number): Promise<'woke' | 'timer'> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<'timer'>((resolve) => (timer = setTimeout(resolve, boundMs, 'timer')));
  const ended = await Promise.race([sleep.then(() => 'woke' as const), bound]);
  clearTimeout(timer);
  return ended;
}

// Pure logic (timers only): the relay's sleep between ticks and its wake-up.
describe('WakeSignal: the relay sleep that a NOTIFY cuts short', () => {
  it('a notify between a timed-out sleep and the next sleep is not lost', async () => {
    const signal = new WakeSignal();
    await signal.sleep(10); // ends by its timer
    signal.notify(); // arrives while the relay ticks
    // 5 s sleep, bounded at 2 s: returns at once only if the notify was kept.
    expect(await endOf(signal.sleep(5_000), 2_000)).toBe('woke');
  });

  it('a notify during a sleep ends it, and is consumed by it', async () => {
    const signal = new WakeSignal();
    const sleeping = signal.sleep(5_000);
    signal.notify();
    expect(await endOf(sleeping, 2_000)).toBe('woke');
    // Consumed: the next sleep runs to its timer.
    expect(await endOf(signal.sleep(50), 2_000)).toBe('woke');
    expect(await endOf(signal.sleep(5_000), 300)).toBe('timer');
  });

  it('close() ends the current sleep and every later one', async () => {
    const signal = new WakeSignal();
    const sleeping = signal.sleep(5_000);
    signal.close();
    expect(await endOf(sleeping, 2_000)).toBe('woke');
    expect(await endOf(signal.sleep(5_000), 2_000)).toBe('woke');
    expect(await endOf(signal.sleep(5_000), 2_000)).toBe('woke');
  });
});
