import type { Producer } from 'kafkajs';
import type pg from 'pg';

/**
 * Development aid (--trace): where a publisher's wall time goes. Wraps the pool's
 * clients and the producer to add up the time spent waiting for each kind of query and
 * for Kafka's acks; the publisher loops are sequential, so the parts add up to the
 * run. Printed to stderr when the publisher stops.
 */
export class PhaseTrace {
  private readonly totals = new Map<string, { ms: number; count: number }>();
  private readonly started = performance.now();

  add(phase: string, ms: number): void {
    const t = this.totals.get(phase) ?? { ms: 0, count: 0 };
    t.ms += ms;
    t.count += 1;
    this.totals.set(phase, t);
  }

  wrapPool(pool: pg.Pool): void {
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
        const phase = `db ${phaseOf(text ?? '')}`;
        const t0 = performance.now();
        const last = args[args.length - 1];
        // pool.query passes a callback; client.query callers await a promise.
        if (typeof last === 'function') {
          return query(...args.slice(0, -1), (err: unknown, res: unknown) => {
            this.add(phase, performance.now() - t0);
            (last as (e: unknown, r: unknown) => void)(err, res);
          });
        }
        return query(...args).finally(() => this.add(phase, performance.now() - t0));
      };
    });
  }

  wrapProducer(producer: Producer): void {
    for (const method of ['send', 'sendBatch'] as const) {
      const original = producer[method].bind(producer) as (...a: unknown[]) => Promise<unknown>;
      (producer as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
        const t0 = performance.now();
        try {
          return await original(...args);
        } finally {
          this.add(`kafka ${method}`, performance.now() - t0);
        }
      };
    }
  }

  report(label: string): string {
    const wall = performance.now() - this.started;
    const lines = [...this.totals].sort((a, b) => b[1].ms - a[1].ms);
    return [
      `trace ${label}: ${(wall / 1000).toFixed(1)} s wall`,
      ...lines.map(
        ([phase, t]) =>
          `  ${phase.padEnd(28)} ${(t.ms / 1000).toFixed(2).padStart(7)} s  ${String(t.count).padStart(7)} calls  ${(t.ms / t.count).toFixed(2).padStart(7)} ms/call`,
      ),
    ].join('\n');
  }
}

function phaseOf(text: string): string {
  const t = text.trim().replace(/\s+/g, ' ');
  if (/^(BEGIN|COMMIT|ROLLBACK)/i.test(t)) return t.split(' ')[0]!.toUpperCase();
  if (t.includes('FOR UPDATE') && t.includes('SKIP LOCKED'))
    return t.includes('pg_try_advisory_xact_lock') ? 'lockShards + claim' : 'claim';
  if (/^UPDATE outbox o SET sent_at/i.test(t) || /^UPDATE outbox SET sent_at/i.test(t))
    return 'markSent';
  if (t.includes('outbox_relay_members')) return 'membership';
  return t.slice(0, 24);
}
