import { fileURLToPath } from 'node:url';
import { baseConfigSchema, envHost, envPort, parseConfig } from '@outbox/lab';
import { z } from 'zod';

const defaultWebDist = fileURLToPath(new URL('../../../web/dist', import.meta.url));

/** Loopback addresses: bound there, only this machine can reach the control endpoints. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** dashboard-api's configuration: the lab's shared variables plus HTTP, security and the stats tick. */
export const configSchema = baseConfigSchema
  .extend({
    /** 0 lets the OS pick a free port (tests); the chosen one is logged. */
    PORT: envPort(3000),
    HOST: envHost,
    /**
     * Bearer token for the control endpoints (failure points, mode, traffic, reset,
     * requeue). Optional on loopback; required when bound elsewhere.
     */
    CONTROL_TOKEN: z
      .string()
      .optional()
      .transform((s) => (s === '' ? undefined : s))
      .pipe(z.string().min(16, 'CONTROL_TOKEN must be at least 16 characters').optional()),
    // CHAOS_ENABLED (base configuration): off, the failure-point endpoints answer 403
    // and the dashboard says chaos is off.
    /**
     * Comma-separated browser origins allowed for CORS and socket.io. Default (unset):
     * this server's own origin on 127.0.0.1 and localhost, and vite's dev server (5173).
     */
    ALLOWED_ORIGINS: z
      .string()
      .optional()
      .transform((s) =>
        s
          ?.split(',')
          .map((o) => o.trim().replace(/\/$/, ''))
          .filter(Boolean),
      ),
    /** The built web app, served with an SPA fallback when the folder exists. */
    WEB_DIST: z.string().min(1).default(defaultWebDist),
    /** How often the stats are computed and pushed (the issue asks for ≥ 2 per second). */
    STATS_INTERVAL_MS: z.coerce.number().int().min(50).max(500).default(400),
    /**
     * Orders (and phantom deliveries) younger than this are in flight, not lost: the
     * consumer may be restarting or Kafka briefly away. Same idea as audit's settleSeconds.
     */
    SETTLE_SECONDS: z.coerce.number().min(0).max(600).default(5),
    /** inventory-consumer's group, whose lag is shown; defaults to `${TOPIC_PREFIX}inventory`, as there. */
    CONSUMER_GROUP_ID: z.string().min(1).optional(),
    /**
     * Lag held this long without the group's committed offsets moving: the consumer is
     * shown stalled. Above a rebalance (the consumer's session is 10 s), below an outage.
     */
    CONSUMER_STALL_SECONDS: z.coerce.number().min(1).max(3_600).default(15),
    /**
     * A Prometheus that scrapes the services with the alert rules loaded
     * (packages/ops/alerts/outbox.rules.yml): the dashboard shows each rule's state
     * beside its threshold and links to its graph. Unset: no alert state is shown.
     * `npm run demo` sets it to the Prometheus it starts.
     */
    PROMETHEUS_URL: z
      .string()
      .optional()
      .transform((s) => (s === '' ? undefined : s))
      .pipe(
        z.url({ protocol: /^https?$/, error: 'PROMETHEUS_URL must be an http(s) URL' }).optional(),
      ),
    /** How many brokers the demo runs (1, or 3 with `npm run demo -- --brokers 3`): stats.kafka.brokers. */
    KAFKA_CLUSTER_NODES: z.coerce.number().int().min(1).max(9).default(1),
    /** How often orders.events' leaders and ISR are read from Kafka. */
    KAFKA_METADATA_INTERVAL_MS: z.coerce.number().int().min(200).max(60_000).default(1_000),
    /** How often the alert rules are read from Prometheus (it evaluates every few seconds). */
    PROMETHEUS_INTERVAL_MS: z.coerce.number().int().min(500).max(60_000).default(2_000),
  })
  .superRefine((c, ctx) => {
    // Control endpoints are a way into the system: open only to this machine, or to
    // whoever holds the token.
    if (!isLoopbackHost(c.HOST) && !c.CONTROL_TOKEN) {
      ctx.addIssue({
        code: 'custom',
        path: ['CONTROL_TOKEN'],
        message: `CONTROL_TOKEN is required when HOST (${c.HOST}) is not a loopback address`,
      });
    }
  });
export type DashboardConfig = z.infer<typeof configSchema>;

/** The origins allowed when ALLOWED_ORIGINS is not set, for the port the server got. */
export function defaultOrigins(port: number): string[] {
  return [
    `http://127.0.0.1:${port}`,
    `http://localhost:${port}`,
    'http://localhost:5173',
    'http://127.0.0.1:5173',
  ];
}

/** Parses `env` once; throws one error naming every bad variable. The only reader of env. */
export function loadConfig(env: NodeJS.ProcessEnv): DashboardConfig {
  return parseConfig(configSchema, env);
}
