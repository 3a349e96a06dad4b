import {
  statsMessageSchema,
  type RelaySetting,
  type StatsMessage,
} from '@outbox/dashboard-api/contract';

/** The relay setting of a demo that has not switched (the polling relay publishes). */
export const POLLING: RelaySetting = { wanted: 'polling', active: 'polling', phase: null };

const COUNTS = { happy_path: 0, db_fail: 0, network_after_commit: 0, network_after_publish: 0 };

/** A contract-valid stats message (checked by the contract's own schema), with overrides. */
export function statsMessage(
  over: Partial<Omit<StatsMessage, 'outbox' | 'rates' | 'scenarios'>> & {
    scenarios?: Partial<Omit<StatsMessage['scenarios'], 'counts'>> & {
      counts?: Partial<StatsMessage['scenarios']['counts']>;
    };
    outbox?: Partial<StatsMessage['outbox']>;
    rates?: Partial<StatsMessage['rates']>;
  } = {},
): StatsMessage {
  const { outbox, rates, ...rest } = over;
  const scenarios = { latest: null, latestFailure: null };
  return statsMessageSchema.parse({
    v: 1,
    tick: 1,
    at: '2026-12-02T10:00:00.000Z',
    tickMs: 3,
    intervalMs: 500,
    totals: { orders: 0, published: 0, deliveries: 0 },
    invariants: {
      ordersWithoutEvents: 0,
      phantomEvents: 0,
      duplicatesDelivered: 0,
      duplicatesCaught: 0,
      doubleProcessed: 0,
      fifoViolations: 0,
      consumerDeadLettered: 0,
      outboxDeadLettered: 0,
    },
    processes: [],
    replicas: [],
    settings: { mode: 'outbox', trafficRate: 0, relay: POLLING },
    events: [],
    latestAnomaly: null,
    chaosEnabled: true,
    cdc: null,
    ...rest,
    scenarios: {
      ...scenarios,
      ...rest.scenarios,
      counts: { ...COUNTS, ...rest.scenarios?.counts },
    },
    outbox: { pending: 0, lagSeconds: 0, failing: 0, deadLettered: 0, ...outbox },
    rates: { publishPerSecond: 0, consumePerSecond: 0, ordersPerSecond: 0, ...rates },
  });
}
