import type { Logger } from '@outbox/core';
import { telemetry } from './telemetry.ts';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * Calls `onGone` when the process that started this one with an IPC channel (the
 * dev-stack supervisor) has gone: the channel closes however it died, SIGKILL included.
 * Nothing without a channel (a service run by hand, by Docker, by systemd).
 *
 * The channel may have closed before this runs (the supervisor died while tsx was still
 * loading the service): then `process.send` is there but `process.connected` is false,
 * and `onGone` is called on the next turn. Without that check such a service came up
 * as an orphan, listening on the demo's ports with no supervisor to stop it.
 */
function onSupervisorGone(onGone: () => void): () => void {
  if (typeof process.send !== 'function') return () => undefined;
  if (!process.connected) {
    const gone = setImmediate(onGone);
    return () => clearImmediate(gone);
  }
  process.once('disconnect', onGone);
  // The channel must not keep the process alive by itself.
  process.channel?.unref();
  return () => process.off('disconnect', onGone);
}

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
 * A signal during start-up, or the supervisor gone: nothing is in flight yet, so leaving
 * at once (exit 0) is safe. Arm it as soon as the logger exists; returns the disarm
 * function, to call right before `onShutdown`. A service that skips it and is slow to
 * start (the dashboard answers /healthz while it derives its counters, so the demo
 * reports it up) outlives a supervisor that dies meanwhile.
 */
export function exitOnStartupSignal(log: Logger): () => void {
  const exitEarly = (signal: string) => {
    log.info({ signal }, 'signal during start-up: exiting');
    process.exit(0);
  };
  for (const signal of SIGNALS) process.once(signal, exitEarly);
  const unwatch = onSupervisorGone(() => exitEarly('supervisor gone'));
  return () => {
    for (const signal of SIGNALS) process.off(signal, exitEarly);
    unwatch();
  };
}

/**
 * Graceful shutdown on SIGTERM/SIGINT, and when the supervisor that started the process
 * has gone (its IPC channel closed): logs `message`, runs the steps in order, exports
 * the last spans (if tracing is on: telemetry.ts), logs
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
    // Last: the spans of the work the steps finished are exported (a no-op untraced).
    await telemetry().shutdown();
    log.info('stopped');
    process.exit(0);
  }
  const begin = (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    void shutdown(signal).catch((error: unknown) => {
      log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    });
  };
  for (const signal of SIGNALS) process.on(signal, () => begin(signal));
  onSupervisorGone(() => {
    if (!stopping) begin('supervisor gone');
  });
  return {
    get stopping() {
      return stopping;
    },
  };
}
