/**
 * The relay's sleep between ticks, cut short by `notify()` (a NOTIFY arrived) or by
 * `close()` (stop). A notify that arrives while the relay is not sleeping is kept:
 * the next sleep returns at once, so no wake-up is lost between two sleeps.
 */
export class WakeSignal {
  private wake: (() => void) | undefined;
  private woken = false;
  private closed = false;

  /** Something new is pending: end the current sleep, or the next one at once. */
  notify(): void {
    if (this.wake) this.wake();
    else this.woken = true;
  }

  /** No more sleeping: the current sleep and every later one return at once. */
  close(): void {
    this.closed = true;
    this.wake?.();
  }

  /** Resolves after `ms`, or earlier on notify() or close(). */
  sleep(ms: number): Promise<void> {
    if (this.woken || this.closed) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      // Whichever ends the sleep (timer, notify, close) also unhooks it: a notify
      // after a sleep that timed out must not reach this closure but set `woken`.
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
