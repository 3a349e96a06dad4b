import { backoffMs, type Logger } from '@outbox/core';
import type { Pool } from 'pg';
import { CONTRACT_VERSION, type FeedEvent, type StatsMessage } from '../contract.ts';
import { readSettingsAndRelay } from '../settings/settings.ts';
import { readCdcView } from './cdc.ts';
import { DeadLettersTail } from './dead-letters.ts';
import { DeliveriesTail } from './deliveries.ts';
import { FeedBuffer } from './feed.ts';
import { OrdersWithoutEvents } from './orders.ts';
import { outboxGauges, PublishedCounter } from './outbox.ts';
import { PhantomEvents } from './phantoms.ts';
import { readProcesses } from './processes.ts';
import { Rates } from './rates.ts';
import { ReservationsTail } from './reservations.ts';
import { ScenarioTracker } from './scenarios.ts';
import type { ConsumerLagMonitor } from './consumer-lag.ts';
import type { PrometheusAlertsMonitor } from './prometheus-alerts.ts';
import type { KafkaClusterMonitor } from './kafka-cluster.ts';
import { UndeliveredOrders } from './undelivered.ts';

export interface StatsEngineOptions {
  pool: Pool;
  log: Logger;
  intervalMs: number;
  settleSeconds: number;
  chaosEnabled: boolean;
  /** Most feed lines in one message. */
  maxEventsPerMessage?: number;
  /**
   * The consumer group's offsets from Kafka. Without it no order without events gets a
   * verdict: every one counts as published, not consumed (the bench runs without).
   */
  consumerLag?: ConsumerLagMonitor;
  /** The alert rules' state from Prometheus (PROMETHEUS_URL); without it none is sent. */
  prometheus?: PrometheusAlertsMonitor;
  /** orders.events' brokers, leaders and ISR from Kafka; without it no `kafka` is sent. */
  kafkaCluster?: KafkaClusterMonitor;
}

type Listener = (message: StatsMessage) => void;

/** The value of a settled promise already known not to have failed. */
const fulfilled = <T>(r: PromiseSettledResult<T>): T => (r as PromiseFulfilledResult<T>).value;

/**
 * The stats stream: every `intervalMs`, reads what changed since the last tick and
 * publishes a StatsMessage. Nothing here scans a table per tick: the append-only
 * tables are tailed by id, orders are judged once they come of age, gauges read
 * partial indexes. Counters are derived from scratch at start and after a reset.
 *
 * Ticks never overlap; a reset runs between two ticks (`exclusive`).
 */
export class StatsEngine {
  readonly feed = new FeedBuffer();
  private readonly deliveries: DeliveriesTail;
  private readonly deadLetters: DeadLettersTail;
  private readonly reservations: ReservationsTail;
  private readonly orders: OrdersWithoutEvents;
  private readonly phantoms: PhantomEvents;
  private readonly published: PublishedCounter;
  private readonly rates = new Rates();
  private readonly scenarios = new ScenarioTracker();
  private readonly undelivered = new UndeliveredOrders();
  private readonly listeners = new Set<Listener>();
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private tickNo = 0;
  private lastTickStart: number | undefined;
  private lastOutboxDead: number | undefined;
  /** Feed lines read by a tick that failed afterwards: sent with the next message. */
  private carried: FeedEvent[] = [];
  private stopped = false;
  latest: StatsMessage | undefined;
  /** How long each part of the last tick took, ms (they run in parallel): for the bench. */
  lastTickParts: Record<string, number> = {};

  constructor(private readonly options: StatsEngineOptions) {
    const { pool, settleSeconds } = options;
    this.deliveries = new DeliveriesTail(pool);
    this.deadLetters = new DeadLettersTail(pool);
    this.reservations = new ReservationsTail(pool);
    this.orders = new OrdersWithoutEvents(pool, settleSeconds);
    this.phantoms = new PhantomEvents(pool, settleSeconds * 1000);
    this.published = new PublishedCounter(pool);
  }

  /** Derives every counter from scratch, computes the first message, starts ticking. */
  async start(): Promise<void> {
    // The database may be briefly unreachable or out of connections (a shared
    // PostgreSQL): retry rather than die, as the tick loop does.
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.exclusive(() => this.baseline());
        break;
      } catch (error) {
        if (this.stopped) throw error;
        const delay = backoffMs(attempt + 1, 250, 10_000);
        this.options.log.warn(
          { err: error, attempt, delay },
          'deriving the stats failed; retrying',
        );
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
    await this.tick().catch((error: unknown) =>
      this.options.log.warn({ err: error }, 'first stats tick failed'),
    );
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.chain.catch(() => undefined);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Runs `fn` between ticks (reset), then re-derives every counter from scratch. */
  async resetWith<T>(fn: () => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      const result = await fn();
      await this.baseline();
      return result;
    });
  }

  /** Computes and publishes one message now (the timer calls it; tests and the bench too). */
  tick(): Promise<StatsMessage> {
    return this.exclusive(() => this.compute()).then((message) => {
      this.latest = message;
      for (const listener of this.listeners) {
        try {
          listener(message);
        } catch (error) {
          this.options.log.warn({ err: error }, 'stats listener failed');
        }
      }
      return message;
    });
  }

  private schedule(): void {
    if (this.stopped) return;
    // A cadence from the start of the previous tick; ticks never overlap, so a slow
    // one delays the next rather than piling ticks up.
    const sinceLast = Date.now() - (this.lastTickStart ?? 0);
    this.timer = setTimeout(
      () => {
        this.tick()
          .catch((error: unknown) => this.options.log.warn({ err: error }, 'stats tick failed'))
          .finally(() => this.schedule());
      },
      Math.max(0, this.options.intervalMs - sinceLast),
    );
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async baseline(): Promise<void> {
    const started = performance.now();
    // One after the other: six full scans at once thrash a small machine.
    await this.deliveries.baseline();
    await this.deadLetters.baseline();
    await this.reservations.baseline();
    await this.orders.baseline();
    await this.phantoms.baseline();
    await this.published.baseline();
    this.rates.clear();
    this.feed.clear();
    this.lastOutboxDead = undefined;
    this.undelivered.reset();
    this.undelivered.sync(this.orders.lostOrders, Date.now(), true);
    this.undelivered.classify(this.options.consumerLag?.reading);
    this.scenarios.reset(
      this.deliveries.totals.happy,
      this.undelivered.neverPublishedNaive,
      this.phantoms.count,
    );
    this.options.log.info(
      {
        ms: Math.round(performance.now() - started),
        orders: this.orders.orders,
        deliveries: this.deliveries.totals.deliveries,
        published: this.published.total,
      },
      'stats derived from scratch',
    );
  }

  private async compute(): Promise<StatsMessage> {
    const started = performance.now();
    this.lastTickStart = Date.now();
    const { pool } = this.options;
    const parts: Record<string, number> = {};
    const timed = <T>(name: string, work: Promise<T>): Promise<T> => {
      const t0 = performance.now();
      return work.finally(() => (parts[name] = performance.now() - t0));
    };
    const settled = await Promise.allSettled([
      timed('deliveries', this.deliveries.next()),
      timed('deadLetters', this.deadLetters.next()),
      timed('reservations', this.reservations.next()),
      timed('orders', this.orders.next()),
      timed('published', this.published.next()),
      timed('outboxGauges', outboxGauges(pool)),
      timed('processes', readProcesses(pool)),
      timed('settings', readSettingsAndRelay(pool)),
    ]);
    // Each tail has moved past what it read, even if another part failed: hand on
    // what crosses parts (and the feed lines) before giving up on this tick.
    const [d0, dl0] = settled;
    if (d0.status === 'fulfilled') {
      // After the orders check, whatever snapshot it read: a delivery seen by the
      // tail always clears its order.
      this.orders.delivered(d0.value.created);
      this.phantoms.suspect(d0.value.orphans);
    }
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) {
      const carried: FeedEvent[] = [
        ...(d0.status === 'fulfilled' ? d0.value.events : []),
        ...(dl0.status === 'fulfilled' ? dl0.value : []),
      ];
      this.feed.push(carried);
      this.carried = [...this.carried, ...carried].slice(-this.feed.size);
      throw failed.reason;
    }
    // The orders part moved OrdersWithoutEvents itself: its set is read below.
    const [dR, dlR, rR, , pR, gR, prR, sR] = settled;
    const deliveries = fulfilled(dR);
    const deadLetters = fulfilled(dlR);
    const doubled = fulfilled(rR);
    const published = fulfilled(pR);
    const gauges = fulfilled(gR);
    const procs = fulfilled(prR);
    const { settings, relay, brokerActions } = fulfilled(sR);
    // After the settings: the slot and Connect are read only while Debezium publishes.
    const cdc = await timed('cdc', readCdcView(pool, relay.active));
    const phantoms = await timed('phantoms', this.phantoms.next());
    this.lastTickParts = parts;

    const s = this.scenarios;
    for (const h of deliveries.happy) s.happy(h.orderId, h.at);
    for (const e of deliveries.events) {
      if (e.outcome === 'duplicate')
        s.anomaly(
          'duplicate_caught',
          e.aggregateId,
          `${e.eventType} ${e.eventId} caught by the inbox`,
        );
      if (e.fifoViolation)
        s.anomaly(
          'fifo_violation',
          e.aggregateId,
          `${e.eventType} seq ${e.seq} arrived out of order`,
        );
    }
    for (const id of doubled) s.anomaly('double_processed', id, `order ${id} reserved stock twice`);
    for (const d of deadLetters) s.anomaly('consumer_dead_letter', null, d.reason);
    if (this.lastOutboxDead !== undefined && gauges.deadLettered > this.lastOutboxDead)
      s.anomaly(
        'outbox_dead_letter',
        null,
        `${gauges.deadLettered - this.lastOutboxDead} outbox row(s) dead-lettered`,
      );
    this.lastOutboxDead = gauges.deadLettered;
    // Judged without events this tick (or cleared by a delivery): then told apart by
    // the group's offsets. Only a naive order never published is the seed's scenario.
    this.undelivered.sync(this.orders.lostOrders);
    for (const o of this.undelivered.classify(this.options.consumerLag?.reading))
      s.anomaly(
        'order_without_event',
        o.orderId,
        o.mode === 'naive'
          ? `order ${o.orderId} (naive) has no event: never published`
          : `order ${o.orderId} (outbox) has no event on the topic${o.sent ? ' although marked sent' : ''}`,
        { scenario: o.mode === 'naive' ? 'network_after_commit' : null },
      );
    for (const id of phantoms)
      s.anomaly('phantom_event', id, `event for order ${id}, which does not exist`);
    // A late event can turn a lost order back into a fine one: keep the table honest.
    s.setCount('network_after_commit', this.undelivered.neverPublishedNaive);
    s.setCount('network_after_publish', this.phantoms.count);

    const fresh: FeedEvent[] = [...deliveries.events, ...deadLetters].sort((a, b) =>
      a.at < b.at ? -1 : a.at > b.at ? 1 : 0,
    );
    this.feed.push(fresh);
    const events = [...this.carried, ...fresh];
    this.carried = [];
    const now = Date.now();
    const rates = this.rates.add({
      at: now,
      published,
      deliveries: this.deliveries.totals.deliveries,
      orders: this.orders.orders,
    });
    this.tickNo += 1;
    const d = this.deliveries.totals;
    return {
      v: CONTRACT_VERSION,
      tick: this.tickNo,
      at: new Date(now).toISOString(),
      tickMs: Math.round((performance.now() - started) * 100) / 100,
      intervalMs: this.options.intervalMs,
      outbox: gauges,
      rates,
      totals: { orders: this.orders.orders, published, deliveries: d.deliveries },
      invariants: {
        ordersWithoutEvents: this.orders.count,
        neverPublished: this.undelivered.neverPublished,
        publishedNotConsumed: this.undelivered.publishedNotConsumed,
        phantomEvents: this.phantoms.count,
        duplicatesDelivered: d.duplicatesDelivered,
        duplicatesCaught: d.duplicatesCaught,
        doubleProcessed: this.reservations.doubleProcessed,
        fifoViolations: d.fifoViolations,
        consumerDeadLettered: this.deadLetters.count,
        outboxDeadLettered: gauges.deadLettered,
      },
      processes: procs.processes,
      replicas: procs.replicas,
      settings,
      cdc,
      events: events.slice(-(this.options.maxEventsPerMessage ?? 200)),
      scenarios: { latest: s.latest, latestFailure: s.latestFailure, counts: { ...s.counts } },
      latestAnomaly: s.latestAnomaly,
      chaosEnabled: this.options.chaosEnabled,
      ...(this.options.consumerLag ? { consumerGroup: this.options.consumerLag.view(now) } : {}),
      ...(this.options.prometheus ? { prometheus: this.options.prometheus.view() } : {}),
      ...(this.options.kafkaCluster
        ? { kafka: { ...this.options.kafkaCluster.view(), actions: brokerActions } }
        : {}),
    };
  }
}
