import type { Logger } from '@outbox/core';
import { z } from 'zod';
import type { AlertRule, PrometheusView } from '../contract.ts';

export interface PrometheusAlertsOptions {
  /** Prometheus' base URL (PROMETHEUS_URL), e.g. http://127.0.0.1:9090. */
  url: string;
  /** How often the rules are read (default 2 s: Prometheus evaluates every few seconds). */
  intervalMs?: number;
  /** A read that takes longer is abandoned and counts as unreachable (default 1.5 s). */
  timeoutMs?: number;
  log: Logger;
}

/** What we read of /api/v1/rules?type=alert (Prometheus 2.x); the rest is ignored. */
const rulesResponseSchema = z.object({
  status: z.literal('success'),
  data: z.object({
    groups: z.array(
      z.object({
        rules: z.array(
          z.object({
            type: z.string(),
            name: z.string(),
            query: z.string(),
            duration: z.number(),
            state: z.enum(['inactive', 'pending', 'firing']),
            alerts: z
              .array(z.object({ activeAt: z.string(), value: z.string() }))
              .nullish()
              .transform((a) => a ?? []),
          }),
        ),
      }),
    ),
  }),
});

/** Parses Prometheus' answer into the contract's rules (alerting rules only, in its order). */
export function alertRules(body: unknown): AlertRule[] {
  const { data } = rulesResponseSchema.parse(body);
  return data.groups.flatMap((g) =>
    g.rules
      .filter((r) => r.type === 'alerting')
      .map((r) => {
        // The earliest active alert: since when the rule has been over its threshold.
        const first = [...r.alerts].sort(
          (a, b) => Date.parse(a.activeAt) - Date.parse(b.activeAt),
        )[0];
        const value = first ? Number(first.value) : NaN;
        return {
          name: r.name,
          state: r.state,
          activeAt: first && r.state !== 'inactive' ? new Date(first.activeAt).toISOString() : null,
          expr: r.query,
          forSeconds: r.duration,
          value: Number.isFinite(value) ? value : null,
        };
      }),
  );
}

/**
 * The alert rules' state from Prometheus, read every `intervalMs` in a loop of its own
 * beside the stats tick, as ConsumerLagMonitor reads Kafka: a Prometheus that is slow
 * or down must not hold the tick, which takes the latest reading. A failed read marks
 * every rule 'unknown' (the last good states are not shown as if still true).
 */
export class PrometheusAlertsMonitor {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private rules: AlertRule[] = [];
  private readAt: number | undefined;
  private lastError: string | null = null;
  private failures = 0;

  constructor(private readonly options: PrometheusAlertsOptions) {}

  start(): void {
    this.stopped = false;
    const loop = () => {
      if (this.stopped) return;
      this.running = this.poll().finally(() => {
        if (!this.stopped) this.timer = setTimeout(loop, this.options.intervalMs ?? 2_000);
      });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Reads once now; the loop calls it, tests may too. Never throws. */
  async poll(): Promise<void> {
    // Appended, not resolved: a Prometheus behind a path prefix (/prometheus) keeps it.
    const url = new URL(`${this.options.url.replace(/\/$/, '')}/api/v1/rules?type=alert`);
    try {
      const res = await fetch(url, {
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 1_500),
      });
      if (!res.ok) throw new Error(`${url.href} answered ${res.status}`);
      this.rules = alertRules(await res.json());
      this.readAt = Date.now();
      if (this.failures > 0) this.options.log.info({ url: url.href }, 'Prometheus answers again');
      this.lastError = null;
      this.failures = 0;
    } catch (error) {
      const e = error as Error;
      this.lastError =
        e.name === 'TimeoutError'
          ? `no answer from ${url.origin} within ${this.options.timeoutMs ?? 1_500} ms`
          : // fetch's own message is "fetch failed"; the reason (ECONNREFUSED …) is its cause.
            `${e.message}${e.cause instanceof Error ? `: ${e.cause.message}` : ''}`;
      this.failures += 1;
      // Once, then about every two minutes: Prometheus down for a while is one story.
      if (this.failures === 1 || this.failures % 60 === 0)
        this.options.log.warn(
          { url: url.href, error: this.lastError },
          'reading the alert rules from Prometheus failed',
        );
    }
  }

  /** What the stats message carries. */
  view(): PrometheusView {
    const status = this.lastError ? 'unreachable' : this.readAt ? 'connected' : 'connecting';
    return {
      url: this.options.url.replace(/\/$/, ''),
      status,
      error: this.lastError,
      readAt: this.readAt ? new Date(this.readAt).toISOString() : null,
      alerts:
        status === 'connected'
          ? this.rules
          : this.rules.map((r) => ({ ...r, state: 'unknown', activeAt: null, value: null })),
    };
  }
}
