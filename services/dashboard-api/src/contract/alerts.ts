/**
 * The alert rules' state as Prometheus evaluates them (`StatsMessage.prometheus`):
 * read from Prometheus' /api/v1/rules, not computed here, so the dashboard shows what
 * an operator's pager would see. Imports only zod, like contract.ts, which re-exports it.
 */
import { z } from 'zod';

/**
 * Prometheus' three states of an alerting rule, plus ours:
 * - inactive: the expression has no result (below the threshold)
 * - pending: above the threshold, for less than the rule's `for:`
 * - firing: above it for at least `for:` (the alert is sent)
 * - unknown: Prometheus did not answer the last read; its state now is not known
 */
export const alertStateSchema = z.enum(['inactive', 'pending', 'firing', 'unknown']);
export type AlertState = z.infer<typeof alertStateSchema>;

export const alertRuleSchema = z.object({
  /** The rule's `alert:` name (OutboxPendingHigh, OutboxLagHigh, …). */
  name: z.string(),
  state: alertStateSchema,
  /** Since when it is pending or firing (its earliest active alert); null when inactive. */
  activeAt: z.string().nullable(),
  /** The rule's expression (`max(outbox_pending) > 1000`). */
  expr: z.string(),
  /** The rule's `for:`, seconds. */
  forSeconds: z.number(),
  /** The expression's value when it was last active (e.g. the backlog), else null. */
  value: z.number().nullable(),
});
export type AlertRule = z.infer<typeof alertRuleSchema>;

/**
 * - connecting: no answer yet since dashboard-api started
 * - connected: the last read succeeded
 * - unreachable: the last read failed (timeout, refused, bad answer): every rule is 'unknown'
 */
export const prometheusStatusSchema = z.enum(['connecting', 'connected', 'unreachable']);
export type PrometheusStatus = z.infer<typeof prometheusStatusSchema>;

export const prometheusViewSchema = z.object({
  /** PROMETHEUS_URL: the UI's base, for links to /graph and /alerts. */
  url: z.string(),
  status: prometheusStatusSchema,
  /** Why the last read failed; null when it succeeded. */
  error: z.string().nullable(),
  /** When the last successful read was made. */
  readAt: z.string().nullable(),
  /** Every alerting rule Prometheus has loaded, in its order. */
  alerts: z.array(alertRuleSchema),
});
export type PrometheusView = z.infer<typeof prometheusViewSchema>;
