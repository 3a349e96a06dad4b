import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { OutboxMetrics } from '@outbox/core';
import { parser } from '@prometheus-io/lezer-promql';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

const rulesFile = fileURLToPath(new URL('../alerts/outbox.rules.yml', import.meta.url));
const consumerMetricsFile = fileURLToPath(
  new URL('../../../services/inventory-consumer/src/metrics.ts', import.meta.url),
);

// Prometheus' rule file format (the parts we use), strictly: a typo in a key fails here.
const duration = z.string().regex(/^(\d+(ms|s|m|h|d|w|y))+$/);
const ruleSchema = z
  .object({
    alert: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/),
    expr: z.string().min(1),
    for: duration.optional(),
    labels: z.object({ severity: z.enum(['warning', 'critical']) }).strict(),
    annotations: z.object({ summary: z.string().min(1), description: z.string().min(1) }).strict(),
  })
  .strict();
const fileSchema = z
  .object({ groups: z.array(z.object({ name: z.string(), rules: z.array(ruleSchema) }).strict()) })
  .strict();

const rules = fileSchema
  .parse(parseYaml(readFileSync(rulesFile, 'utf8')))
  .groups.flatMap((g) => g.rules);
const byName = (name: string) => {
  const rule = rules.find((r) => r.alert === name);
  if (!rule) throw new Error(`no alert ${name}`);
  return rule;
};

interface Parsed {
  errors: string[];
  metrics: string[];
  /** `expr > N` at the top: the comparison and N. */
  threshold?: { op: string; value: number };
  numbers: number[];
}

function parsePromql(expr: string): Parsed {
  const tree = parser.parse(expr);
  const errors: string[] = [];
  const metrics: string[] = [];
  const numbers: number[] = [];
  tree.iterate({
    enter(node) {
      if (node.type.isError)
        errors.push(`syntax error at ${node.from}: "${expr.slice(node.from, node.to + 10)}"`);
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector')
        metrics.push(expr.slice(node.from, node.to));
      if (node.name === 'NumberDurationLiteral')
        numbers.push(Number(expr.slice(node.from, node.to)));
    },
  });
  const top = tree.topNode.firstChild;
  let threshold: Parsed['threshold'];
  if (top?.name === 'BinaryExpr' && top.lastChild?.name === 'NumberDurationLiteral') {
    const op = top.lastChild.prevSibling;
    threshold = {
      op: op ? expr.slice(op.from, op.to) : '?',
      value: Number(expr.slice(top.lastChild.from, top.lastChild.to)),
    };
  }
  return { errors, metrics, numbers, ...(threshold ? { threshold } : {}) };
}

/** Series names a metric exposes (a histogram as _bucket, _sum and _count). */
function seriesOf(metrics: { name: string; type: string }[]): Set<string> {
  return new Set(
    metrics.flatMap((m) =>
      m.type === 'histogram' ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`] : [m.name],
    ),
  );
}

describe('Prometheus alert rules (packages/ops/alerts/outbox.rules.yml)', () => {
  it('every expression is valid PromQL', () => {
    expect(rules.length).toBeGreaterThanOrEqual(6);
    for (const rule of rules) expect(parsePromql(rule.expr).errors, rule.alert).toEqual([]);
  });

  it('the PromQL parser does catch a broken expression (the check above is not vacuous)', () => {
    expect(parsePromql('max(outbox_pending) > ').errors).not.toEqual([]);
    expect(parsePromql('sum(rate(outbox_publish_errors_total[5m]) > 0.01').errors).not.toEqual([]);
  });

  it('every metric they read is one the services export', async () => {
    const registry = new Registry();
    new OutboxMetrics(registry);
    const outbox = seriesOf(
      (await registry.getMetricsAsJSON()).map((m) => ({ name: m.name, type: String(m.type) })),
    );
    // The consumer's metrics class, loaded from its source (not a dependency of ops).
    const { ConsumerMetrics } = (await import(pathToFileURL(consumerMetricsFile).href)) as {
      ConsumerMetrics: new () => { registry: Registry };
    };
    const consumer = seriesOf(
      (await new ConsumerMetrics().registry.getMetricsAsJSON()).map((m) => ({
        name: m.name,
        type: String(m.type),
      })),
    );
    const exported = new Set([...outbox, ...consumer]);
    const read = new Set(rules.flatMap((r) => parsePromql(r.expr).metrics));
    expect([...read].filter((m) => !exported.has(m))).toEqual([]);
    // The seed's five outbox metrics are all watched.
    for (const m of [
      'outbox_pending',
      'outbox_lag_seconds',
      'outbox_publish_errors_total',
      'outbox_worker_tick_duration_seconds_bucket',
      'outbox_dead_lettered',
    ])
      expect(read).toContain(m);
  });

  it("carries the seed's thresholds", () => {
    const pending = parsePromql(byName('OutboxPendingHigh').expr);
    expect(pending.metrics).toEqual(['outbox_pending']);
    expect(pending.threshold).toEqual({ op: '>', value: 1000 });

    const lag = parsePromql(byName('OutboxLagHigh').expr);
    expect(lag.metrics).toEqual(['outbox_lag_seconds']);
    expect(lag.threshold).toEqual({ op: '>', value: 60 });

    const errors = parsePromql(byName('OutboxPublishErrors').expr);
    expect(errors.metrics).toEqual(['outbox_publish_errors_total']);
    expect(byName('OutboxPublishErrors').expr).toMatch(/\brate\(/);
    expect(errors.threshold).toEqual({ op: '>', value: 0.01 });

    const tick = parsePromql(byName('OutboxTickSlow').expr);
    expect(tick.metrics).toEqual(['outbox_worker_tick_duration_seconds_bucket']);
    expect(byName('OutboxTickSlow').expr).toMatch(/histogram_quantile\(0\.95,/);
    expect(tick.threshold).toEqual({ op: '>', value: 1 });
  });

  it('gauges read from PostgreSQL are not summed across replicas (each reports the same value)', () => {
    for (const rule of rules) {
      for (const gauge of ['outbox_pending', 'outbox_lag_seconds', 'outbox_dead_lettered'])
        expect(rule.expr, rule.alert).not.toMatch(
          new RegExp(`sum\\s*(by\\s*\\([^)]*\\)\\s*)?\\(\\s*${gauge}\\b`),
        );
    }
  });
});
