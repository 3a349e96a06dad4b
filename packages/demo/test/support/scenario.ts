import { randomBytes } from 'node:crypto';
import { audit, FailurePoints, type AuditReport } from '@outbox/lab';
import { freeSystemPorts } from '@outbox/testkit';
import { startSystem, type System } from '../../src/index.ts';

/** A whole backend (real processes) in its own schema, topic prefix and ports. */
export async function startScenarioSystem(label: string): Promise<{
  system: System;
  points: FailurePoints;
  orders: OrderClient;
}> {
  const id = `${label}_${randomBytes(3).toString('hex')}`;
  // Away from the demo's 3000–3004 and below the ephemeral range (testkit).
  const ports = await freeSystemPorts();
  const system = await startSystem({
    schema: `scn_${id}`,
    topicPrefix: `scn-${id}.`,
    ports,
    dashboard: false,
    env: { LOG_LEVEL: 'warn' },
    log: (line) => process.stderr.write(`[${label}] ${line}\n`),
  });
  await system.waitReady();
  return {
    system,
    points: new FailurePoints(system.pool),
    orders: new OrderClient(system.urls.orderApi),
  };
}

export type OrderMode = 'outbox' | 'naive';

/** POST /orders as a user would; `status` 0 = the connection broke (the process died). */
export class OrderClient {
  constructor(private readonly baseUrl: string) {}

  async create(mode: OrderMode, quantity = 1): Promise<{ status: number; orderId?: string }> {
    try {
      const res = await fetch(`${this.baseUrl}/orders?mode=${mode}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 7, sku: 'sku-1', quantity }),
        signal: AbortSignal.timeout(30_000),
      });
      const body = (await res.json().catch(() => ({}))) as { orderId?: string };
      return { status: res.status, ...(body.orderId ? { orderId: body.orderId } : {}) };
    } catch {
      return { status: 0 };
    }
  }

  async pay(orderId: string): Promise<number> {
    const res = await fetch(`${this.baseUrl}/orders/${orderId}/pay`, { method: 'POST' });
    return res.status;
  }

  /** `n` orders one after another (the order-api may be restarting: waits for it). */
  async createMany(mode: OrderMode, n: number): Promise<{ status: number; orderId?: string }[]> {
    const results = [];
    for (let i = 0; i < n; i += 1) results.push(await this.create(mode));
    return results;
  }
}

/**
 * Polls the auditor until `done(report)` holds; returns that report. On timeout the
 * error carries the last report, which is what a failing scenario needs to show.
 */
export async function auditUntil(
  system: System,
  done: (report: AuditReport) => boolean,
  timeoutMs = 90_000,
): Promise<AuditReport> {
  const deadline = Date.now() + timeoutMs;
  let last: AuditReport | undefined;
  while (Date.now() < deadline) {
    last = await audit(system.pool);
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`audit condition not met in ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
}

/** Orders (of a mode) the consumer has not seen yet; 0 = that traffic has been delivered. */
export async function undelivered(system: System, mode: OrderMode): Promise<number> {
  const { rows } = await system.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM orders o
      WHERE o.mode = $1
        AND NOT EXISTS (SELECT 1 FROM consumer_deliveries d
                         WHERE d.aggregate_id = o.id::text AND d.event_type = 'OrderCreated')`,
    [mode],
  );
  return rows[0]?.n ?? 0;
}

/** Resolves when `name` has been restarted at least `restarts` times and is up again. */
export async function waitRestarted(
  system: System,
  name: string,
  restarts: number,
  timeoutMs = 90_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const status = system.supervisor.status().find((s) => s.name === name);
    if (status && status.restarts >= restarts && status.state === 'up') return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${name} was not restarted ${restarts}× within ${timeoutMs} ms`);
}
