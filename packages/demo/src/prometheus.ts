import { ensurePrometheus } from '@outbox/dev-stack';
import type { SystemPrometheusOptions } from './system.ts';

/**
 * Whether `npm run demo` runs its own Prometheus, and with what: not with
 * --no-prometheus, not when PROMETHEUS_URL names an existing one (the dashboard reads
 * that one), else Debian's package, installed through apt-get when missing as the e2e
 * specs install Chromium. Prometheus is an operator's tool beside the lab, not part of
 * it: where it cannot be had (not root, no apt-get, the install failed) the demo goes
 * on without it and says so in one line.
 */
export function demoPrometheus(options: {
  skip: boolean;
  existingUrl: string | undefined;
  log: (line: string) => void;
}): SystemPrometheusOptions | undefined {
  const { log } = options;
  if (options.skip) {
    log('prometheus: not started (--no-prometheus): the dashboard shows no alert state');
    return undefined;
  }
  if (options.existingUrl) return undefined;
  try {
    const binaries = ensurePrometheus((line) => log(`prometheus: ${line}`));
    return { binaries, optional: true };
  } catch (error) {
    log(
      `prometheus: not started (${(error as Error).message}); going on without it, the dashboard shows no alert state`,
    );
    return undefined;
  }
}
