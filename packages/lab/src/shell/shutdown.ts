import type { Logger } from '@outbox/core';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

export interface ShutdownPlan {
  /** Logged (with the signal) when the first signal arrives. */
  message: string;
  /** Exits 1 with `timeoutMessage` if the steps have not finished by then. */
  timeoutMs: number;
  timeoutMessage: string;
  /** Run one after another, in this order; the order is the service's contract. */
  steps: (() => Promise<void> | void)[];
}

export interface Shutdown {
  /** True from the first signal on (health turns 503, keep-alive is refused, …). */
  readonly stopping: boolean;
}

/**
 * A signal during start-up: nothing is in flight yet, so leaving at once (exit 0) is
 * safe. Returns the disarm function; call it right before `onShutdown`.
 */
export function exitOnStartupSignal(log: Logger): () => void {
  const exitEarly = (signal: NodeJS.Signals) => {
    log.info({ signal }, 'signal during start-up: exiting');
    process.exit(0);
  };
  for (const signal of SIGNALS) process.once(signal, exitEarly);
  return () => {
    for (const signal of SIGNALS) process.off(signal, exitEarly);
  };
}

/**
 * Graceful shutdown on SIGTERM/SIGINT: logs `message`, runs the steps in order, logs
 * "stopped" and exits 0. A step that throws exits 1 ("shutdown failed"); so does the
 * deadline. A second signal exits 1 at once (an operator who insists wins).
 */
export function onShutdown(log: Logger, plan: ShutdownPlan): Shutdown {
  let stopping = false;
  async function shutdown(signal: string): Promise<void> {
    log.info({ signal }, plan.message);
    const force = setTimeout(() => {
      log.error(plan.timeoutMessage);
      process.exit(1);
    }, plan.timeoutMs);
    force.unref();
    for (const step of plan.steps) await step();
    log.info('stopped');
    process.exit(0);
  }
  for (const signal of SIGNALS) {
    process.on(signal, () => {
      if (stopping) {
        log.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      void shutdown(signal).catch((error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
    });
  }
  return {
    get stopping() {
      return stopping;
    },
  };
}
