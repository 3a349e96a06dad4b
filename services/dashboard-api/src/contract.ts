/**
 * The dashboard's wire contract: the socket.io stats message and every REST request
 * and response of services/dashboard-api, as zod schemas plus their TS types.
 *
 * This file imports nothing but zod and the lab's list of failure-point names (a file
 * without imports), so the web app can bundle it in the browser:
 *   import type { StatsMessage } from '@outbox/dashboard-api/contract';
 *
 * Stability: changes are additive only (new optional fields, new endpoints, new enum
 * members announced here first). Changelog:
 *   v1 — initial contract.
 *   v1, addition — `invariants.neverPublished` / `publishedNotConsumed` (orders without
 *        events told apart) and `consumerGroup` (lag per partition, stalled), both
 *        optional; an order without events names the seed's "network died after commit"
 *        only when it was written in naive mode.
 *   v1, addition — `prometheus` (optional): the alert rules' state read from Prometheus.
 *   v1, addition — the 3-broker lesson: `settings.acks` (optional; 'all' when absent),
 *        `kafka` (optional: brokers, partition leaders and ISR), PUT /api/acks, the
 *        failure points broker.* and `appliesTo: 'cluster'` (only with 3 brokers).
 *   v1, addition — `kafka.actions` (optional): the demo's broker actions, for the feed;
 *        GET /api/audit's `sentNotDelivered` (optional): the rows behind a lost event,
 *        each with the partition and offset the broker acknowledged; the same on an
 *        outbox row (`kafkaPartition`, `kafkaOffset`, optional).
 */
import { FAILURE_POINT_NAMES } from '@outbox/lab/failure-point-names';
import { z } from 'zod';
import { prometheusViewSchema } from './contract/alerts.ts';
import { consumerGroupSchema } from './contract/consumer-group.ts';

export * from './contract/alerts.ts';
export * from './contract/consumer-group.ts';

export const CONTRACT_VERSION = 1;

// ---------------------------------------------------------------------------------------
// Shared vocabulary
// ---------------------------------------------------------------------------------------

/** How order-api writes new orders: the outbox (one transaction) or the naive dual write. */
export const orderModeSchema = z.enum(['outbox', 'naive']);
export type OrderMode = z.infer<typeof orderModeSchema>;

/** The lab's failure points (@outbox/lab/failure-point-names: no dependency, bundles in the browser). */
export const failurePointNameSchema = z.enum(FAILURE_POINT_NAMES);
export type FailurePointName = z.infer<typeof failurePointNameSchema>;

export const failureModeSchema = z.enum(['off', 'once', 'times', 'on']);
export type FailureMode = z.infer<typeof failureModeSchema>;

/**
 * How a point is switched in the UI:
 * - shot: a one-off fault (once / times N / on / off)
 * - switch: a state that holds while on (on / off)
 * - window: on for N seconds (seconds, default 10), or off
 */
export const failurePointKindSchema = z.enum(['shot', 'switch', 'window']);
export type FailurePointKind = z.infer<typeof failurePointKindSchema>;

/** The seed's four dual-write scenarios ("Четыре возможных сценария при сбое"). */
export const scenarioIdSchema = z.enum([
  'happy_path',
  'db_fail',
  'network_after_commit',
  'network_after_publish',
]);
export type ScenarioId = z.infer<typeof scenarioIdSchema>;

export const processStateSchema = z.enum(['up', 'down', 'restarting']);
export type ProcessState = z.infer<typeof processStateSchema>;

/** Outbox row status as the browser filters it. */
export const outboxStatusSchema = z.enum(['pending', 'failed', 'dead', 'sent']);
export type OutboxStatus = z.infer<typeof outboxStatusSchema>;

/** Timestamps travel as ISO-8601 strings. */
const isoTime = z.string();
/** bigint ids (outbox.id, consumer_deliveries.id, kafka offsets) travel as decimal strings. */
const bigId = z.string().regex(/^\d+$/);

// ---------------------------------------------------------------------------------------
// The shape of the static descriptions (the texts themselves: src/teaching/, served in
// GET /api/state too)
// ---------------------------------------------------------------------------------------

export const scenarioSchema = z.object({
  id: scenarioIdSchema,
  /** The seed's row: scenario, DB, Kafka, consequence (English). */
  label: z.string(),
  db: z.string(),
  kafka: z.string(),
  consequence: z.string(),
  /** The seed's own wording (Russian), for the table's tooltip. */
  seedLabel: z.string(),
  seedConsequence: z.string(),
});
export type Scenario = z.infer<typeof scenarioSchema>;

export const failurePointInfoSchema = z.object({
  name: failurePointNameSchema,
  label: z.string(),
  kind: failurePointKindSchema,
  /** Which mode of order-api it breaks ('naive' points do nothing in outbox mode). */
  /** The order mode it needs, or 'cdc': only while Debezium publishes. */
  /** 'cluster': only when the demo runs 3 brokers (`npm run demo -- --brokers 3`). */
  appliesTo: z.enum(['naive', 'outbox', 'both', 'cdc', 'cluster']),
  /** What happens and why (one sentence). */
  description: z.string(),
  /** What to watch on the dashboard (one sentence). */
  watch: z.string(),
  /** The seed scenario it reproduces, if it is one of the four. */
  scenario: scenarioIdSchema.nullable(),
});
export type FailurePointInfo = z.infer<typeof failurePointInfoSchema>;

// ---------------------------------------------------------------------------------------
// socket.io: the stats stream
// ---------------------------------------------------------------------------------------

/** socket.io event names (server → client). */
export const SOCKET_EVENTS = {
  /** StatsMessage, at least twice a second (and once right after connecting). */
  stats: 'stats',
} as const;

export const invariantsSchema = z.object({
  /** Orders older than the settle window whose OrderCreated never reached the consumer and is not pending (= audit()). */
  ordersWithoutEvents: z.number().int(),
  /**
   * Of those, the really lost: no event is waiting on the topic (naive: the network
   * dropped after commit; outbox: no sent row, or the group consumed past where it
   * would be). Judged from the group's offsets once it has read past the order.
   */
  neverPublished: z.number().int().optional(),
  /**
   * Of those, the ones whose event is (naive: may be) on the topic ahead of the group's
   * committed offset: consumer lag or a stalled consumer, late but not lost.
   */
  publishedNotConsumed: z.number().int().optional(),
  /** Distinct orders whose OrderCreated was delivered although the order does not exist. */
  phantomEvents: z.number().int(),
  /** Deliveries beyond the first of the same event (per consumer). */
  duplicatesDelivered: z.number().int(),
  /** Duplicates the inbox recognised and skipped. */
  duplicatesCaught: z.number().int(),
  /** Orders whose stock was reserved more than once (0 while the inbox is on). */
  doubleProcessed: z.number().int(),
  /** Deliveries that arrived behind a later event of the same aggregate. */
  fifoViolations: z.number().int(),
  /** Messages inventory-consumer sent to its dead-letter topic. */
  consumerDeadLettered: z.number().int(),
  /** Outbox rows the relay dead-lettered (attempts exhausted). */
  outboxDeadLettered: z.number().int(),
});
export type Invariants = z.infer<typeof invariantsSchema>;

export const replicaSchema = z.object({
  replicaId: z.string(),
  sharded: z.boolean(),
  shards: z.array(z.number().int()),
  heartbeatAt: isoTime,
  sleeping: z.boolean(),
  /** Heartbeat within the membership's liveness window. */
  alive: z.boolean(),
});
export type Replica = z.infer<typeof replicaSchema>;

export const processSchema = z.object({
  /** order-api | publisher-worker-1 | publisher-worker-2 | inventory-consumer | dashboard-api */
  name: z.string(),
  kind: z.string(),
  state: processStateSchema,
  pid: z.number().int().nullable(),
  restarts: z.number().int(),
  startedAt: isoTime.nullable(),
  url: z.string().nullable(),
  updatedAt: isoTime,
  /** For publisher-worker processes: the relay membership row(s) it owns. */
  replicas: z.array(replicaSchema),
});
export type ProcessStatus = z.infer<typeof processSchema>;

export const deliveryOutcomeSchema = z.enum(['processed', 'duplicate', 'reprocessed']);
export type DeliveryOutcome = z.infer<typeof deliveryOutcomeSchema>;

/** One line of the live event feed: a delivery seen by the consumer, or a dead letter. */
export const feedEventSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('delivery'),
    /** consumer_deliveries.id: increasing, use as React key. */
    id: bigId,
    at: isoTime,
    consumer: z.string(),
    eventId: z.string(),
    eventType: z.string(),
    aggregateId: z.string(),
    seq: z.number().int().nullable(),
    topic: z.string(),
    partition: z.number().int(),
    offset: bigId,
    /** processed | duplicate (caught by the inbox) | reprocessed (inbox off: applied again) */
    outcome: deliveryOutcomeSchema,
    caughtByInbox: z.boolean(),
    fifoViolation: z.boolean(),
  }),
  z.object({
    kind: z.literal('dead_letter'),
    /** consumer_dead_letters.id */
    id: bigId,
    at: isoTime,
    consumer: z.string(),
    topic: z.string(),
    partition: z.number().int(),
    offset: bigId,
    reason: z.string(),
  }),
]);
export type FeedEvent = z.infer<typeof feedEventSchema>;

/** What kind of anomaly was seen last. */
export const anomalyKindSchema = z.enum([
  'order_without_event',
  'phantom_event',
  'duplicate_caught',
  'double_processed',
  'fifo_violation',
  'consumer_dead_letter',
  'outbox_dead_letter',
]);
export type AnomalyKind = z.infer<typeof anomalyKindSchema>;

export const anomalySchema = z.object({
  kind: anomalyKindSchema,
  /**
   * The seed scenario it matches, else null: phantom_event → network_after_publish;
   * order_without_event → network_after_commit only for an order written in naive mode
   * and never published (in outbox mode a lost event is a defect, not that scenario).
   */
  scenario: scenarioIdSchema.nullable(),
  at: isoTime,
  aggregateId: z.string().nullable(),
  detail: z.string(),
});
export type Anomaly = z.infer<typeof anomalySchema>;

export const scenarioHitSchema = z.object({
  id: scenarioIdSchema,
  at: isoTime,
  /** The order it happened to, when known. */
  orderId: z.string().nullable(),
});
export type ScenarioHit = z.infer<typeof scenarioHitSchema>;

export const relayKindSchema = z.enum(['polling', 'cdc']);
export type RelayKind = z.infer<typeof relayKindSchema>;

/** Which relay publishes the outbox: the polling relay (publisher-worker) or Debezium. */
export const relaySettingSchema = z.object({
  /** What was asked for (PUT /api/relay, `npm run chaos -- relay`). */
  wanted: relayKindSchema,
  /** What publishes now; differs from `wanted` while the demo carries the switch out. */
  active: relayKindSchema,
  /** The switch's current step, or why it failed; null when settled. */
  phase: z.string().nullable(),
});
export type RelaySetting = z.infer<typeof relaySettingSchema>;

/**
 * The relay's producer acks: 'all' (the default, safe: the in-sync replicas have the
 * batch before the relay marks it sent) or '1' (UNSAFE, for the lesson: the leader alone
 * has it; a leader that dies before its followers copy it loses events marked sent).
 */
export const relayAcksSchema = z.enum(['all', '1']);
export type RelayAcks = z.infer<typeof relayAcksSchema>;

export const settingsSchema = z.object({
  mode: orderModeSchema,
  /** Generated orders per second (the demo process follows it). */
  trafficRate: z.number(),
  relay: relaySettingSchema,
  /** The relay's acks (PUT /api/acks); absent from older servers: 'all'. */
  acks: relayAcksSchema.optional(),
});
export type Settings = z.infer<typeof settingsSchema>;

/** While Debezium publishes: its replication slot and Connect's task (null otherwise). */
export const cdcViewSchema = z.object({
  slot: z.string(),
  /** false: the slot is gone (dropped by a switch back in flight). */
  slotExists: z.boolean(),
  /** A walsender (Connect) is reading the slot now. */
  slotActive: z.boolean(),
  /** WAL bytes since the slot's confirmed_flush_lsn: what Connect has not confirmed. */
  lagBytes: z.number(),
  /** The walsender's replay lag (null when nobody reads the slot). */
  lagSeconds: z.number().nullable(),
  /** WAL bytes PostgreSQL keeps for the slot (since restart_lsn): grows while Connect is down. */
  retainedBytes: z.number(),
  walStatus: z.string().nullable(),
  /** The connector task's state from Connect's REST API, or 'unreachable'. */
  connectTask: z.string(),
});
export type CdcView = z.infer<typeof cdcViewSchema>;

/** One broker of the cluster the demo runs, as the metadata sees it. */
export const kafkaBrokerSchema = z.object({
  /** node.id */
  id: z.number().int(),
  /** host:port */
  address: z.string(),
  /** In the cluster's metadata now (a killed broker drops out; a stopped one lingers until its session expires). */
  up: z.boolean(),
});
export type KafkaBroker = z.infer<typeof kafkaBrokerSchema>;

/** One partition of orders.events: who leads it and who is in sync. */
export const kafkaPartitionSchema = z.object({
  partition: z.number().int(),
  /** node.id of the leader; null while it has none (offline). */
  leader: z.number().int().nullable(),
  replicas: z.array(z.number().int()),
  /** In-sync replicas (the leader included). */
  isr: z.array(z.number().int()),
  /** Messages per second appended to it over the last seconds (high-watermark delta). */
  messagesPerSecond: z.number(),
});
export type KafkaPartition = z.infer<typeof kafkaPartitionSchema>;

/** The broker side: how many brokers the demo runs, and orders.events' leaders and ISR, live. */
export const kafkaViewSchema = z.object({
  /** 1 (the default demo) or 3 (`npm run demo -- --brokers 3`). */
  brokers: z.number().int(),
  /** The topic described (orders.events, with the demo's prefix). */
  topic: z.string(),
  /** The topic's replication factor and min.insync.replicas (null when unknown). */
  replicationFactor: z.number().int().nullable(),
  minInsyncReplicas: z.number().int().nullable(),
  nodes: z.array(kafkaBrokerSchema),
  partitions: z.array(kafkaPartitionSchema),
  /** The partition "Kill the partition leader" aims at: the busiest now (null: none yet). */
  busiestPartition: z.number().int().nullable(),
  /** false: the metadata could not be read this tick (the rest is the last known). */
  reachable: z.boolean(),
  /**
   * What the demo did to the brokers (the broker.* failure points, a node started again
   * after it died), oldest first, at most 20; absent from older servers.
   */
  actions: z.array(z.object({ at: isoTime, text: z.string() })).optional(),
});
export type KafkaView = z.infer<typeof kafkaViewSchema>;

export const statsMessageSchema = z.object({
  v: z.literal(CONTRACT_VERSION),
  /** Tick number since the server started (resets never rewind it). */
  tick: z.number().int(),
  at: isoTime,
  /** Server-side cost of computing this message, ms (the measured "tick cost"). */
  tickMs: z.number(),
  intervalMs: z.number().int(),
  outbox: z.object({
    pending: z.number().int(),
    /** Age of the oldest pending row, seconds (0 when none). */
    lagSeconds: z.number(),
    /** Pending rows that failed at least once and wait for their retry. */
    failing: z.number().int(),
    deadLettered: z.number().int(),
  }),
  rates: z.object({
    /** Outbox rows marked sent by the relay, per second. */
    publishPerSecond: z.number(),
    /** Deliveries seen by the consumer (any outcome), per second. */
    consumePerSecond: z.number(),
    /** Orders committed, per second. */
    ordersPerSecond: z.number(),
  }),
  totals: z.object({
    orders: z.number().int(),
    /** Outbox rows sent. */
    published: z.number().int(),
    deliveries: z.number().int(),
  }),
  invariants: invariantsSchema,
  processes: z.array(processSchema),
  /** Every relay membership row (also nested under its process when one matches). */
  replicas: z.array(replicaSchema),
  settings: settingsSchema,
  /** Feed lines that are new since the previous message (oldest first, at most 200). */
  events: z.array(feedEventSchema),
  scenarios: z.object({
    /** The most recent of the four scenarios observed (happy path included). */
    latest: scenarioHitSchema.nullable(),
    /** The most recent non-happy scenario observed (sticky until reset). */
    latestFailure: scenarioHitSchema.nullable(),
    /** How often each was observed since the last reset (db_fail leaves no trace: 0). */
    counts: z.record(scenarioIdSchema, z.number().int()),
  }),
  /** The last anomaly of any kind since the last reset. */
  latestAnomaly: anomalySchema.nullable(),
  chaosEnabled: z.boolean(),
  /** inventory-consumer's group on orders.events, read from Kafka (lag per partition, stalled). */
  consumerGroup: consumerGroupSchema.optional(),
  cdc: cdcViewSchema.nullable(),
  /** The alert rules' state from Prometheus; absent when dashboard-api has no PROMETHEUS_URL. */
  prometheus: prometheusViewSchema.optional(),
  /** Brokers, partition leaders and ISR of orders.events; absent from older servers. */
  kafka: kafkaViewSchema.optional(),
});
export type StatsMessage = z.infer<typeof statsMessageSchema>;

// ---------------------------------------------------------------------------------------
// REST
// ---------------------------------------------------------------------------------------

/** Every 4xx/5xx body. */
export const apiErrorSchema = z.object({
  error: z.string(),
  /** For 400: what was wrong, per field. */
  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});
export type ApiError = z.infer<typeof apiErrorSchema>;

export const failurePointStateSchema = failurePointInfoSchema.extend({
  mode: failureModeSchema,
  remaining: z.number().int(),
  params: z.record(z.string(), z.unknown()),
  fired: z.number().int(),
  updatedAt: isoTime,
  /** For window points: when the window ends (ISO), if one is open. */
  activeUntil: isoTime.nullable(),
  /** Armed now (on, once/times with shots left, or an open window). */
  active: z.boolean(),
});
export type FailurePointState = z.infer<typeof failurePointStateSchema>;

/** GET /api/state */
export const stateResponseSchema = z.object({
  settings: settingsSchema,
  failurePoints: z.array(failurePointStateSchema),
  scenarios: z.array(scenarioSchema),
  /** false → the chaos endpoints answer 403 (CHAOS_ENABLED=false). */
  chaosEnabled: z.boolean(),
  /** true → control endpoints need `Authorization: Bearer <token>`. */
  controlRequiresToken: z.boolean(),
  maxTrafficRate: z.number(),
});
export type StateResponse = z.infer<typeof stateResponseSchema>;

/** POST /api/failure-points/:name → FailurePointState (control; chaos). */
export const armRequestSchema = z.object({
  mode: failureModeSchema,
  /** mode 'times': how many shots (1..1000). */
  times: z.number().int().min(1).max(1_000).optional(),
  /** window points with mode 'on': seconds the window stays open (1..600, default 10). */
  seconds: z.number().int().min(1).max(600).optional(),
});
export type ArmRequest = z.infer<typeof armRequestSchema>;

/** PUT /api/relay → Settings (control): the demo switches the relay live. */
export const relayRequestSchema = z.object({ relay: relayKindSchema });
export type RelayRequest = z.infer<typeof relayRequestSchema>;

/** PUT /api/acks → Settings (control): the relay's producer acks ('1' is unsafe). */
export const acksRequestSchema = z.object({ acks: relayAcksSchema });
export type AcksRequest = z.infer<typeof acksRequestSchema>;

/** PUT /api/mode → Settings (control). */
export const modeRequestSchema = z.object({ mode: orderModeSchema });
export type ModeRequest = z.infer<typeof modeRequestSchema>;

export const MAX_TRAFFIC_RATE = 2_000;
/** PUT /api/traffic → Settings (control). */
export const trafficRequestSchema = z.object({ rate: z.number().min(0).max(MAX_TRAFFIC_RATE) });
export type TrafficRequest = z.infer<typeof trafficRequestSchema>;

/** POST /api/reset (control): empties the demo's data, disarms every failure point, re-seeds stock. */
export const resetResponseSchema = z.object({ ok: z.literal(true), resetAt: isoTime });
export type ResetResponse = z.infer<typeof resetResponseSchema>;

/** GET /api/outbox query (every field optional). Keyset paging by id, newest first. */
export const outboxQuerySchema = z.object({
  status: outboxStatusSchema.optional(),
  aggregateId: z.string().min(1).max(200).optional(),
  eventType: z.string().min(1).max(200).optional(),
  /** nextCursor of the previous page: rows with id < cursor. */
  cursor: bigId.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type OutboxQuery = z.input<typeof outboxQuerySchema>;

export const outboxRowSchema = z.object({
  id: bigId,
  aggregateType: z.string(),
  aggregateId: z.string(),
  eventType: z.string(),
  eventVersion: z.number().int(),
  payload: z.unknown(),
  headers: z.record(z.string(), z.unknown()),
  createdAt: isoTime,
  sentAt: isoTime.nullable(),
  attempts: z.number().int(),
  error: z.string().nullable(),
  nextAttemptAt: isoTime,
  deadLetteredAt: isoTime.nullable(),
  topic: z.string().nullable(),
  /**
   * Where the broker acknowledged the event (core's migration 000009): null while unsent
   * or when the relay recorded none (CDC); absent from older servers.
   */
  kafkaPartition: z.number().int().nullable().optional(),
  kafkaOffset: bigId.nullable().optional(),
  shard: z.number().int(),
  status: outboxStatusSchema,
});
export type OutboxRowView = z.infer<typeof outboxRowSchema>;

/** GET /api/outbox */
export const outboxPageSchema = z.object({
  rows: z.array(outboxRowSchema),
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  nextCursor: bigId.nullable(),
});
export type OutboxPage = z.infer<typeof outboxPageSchema>;

/** POST /api/outbox/:id/requeue (control) → the row, pending again. 404 unknown, 409 if sent. */
export const requeueResponseSchema = z.object({ row: outboxRowSchema });
export type RequeueResponse = z.infer<typeof requeueResponseSchema>;

/** GET /api/orders/:id/journey: order row → outbox row → Kafka offset → inbox row → reservation. */
export const journeySchema = z.object({
  orderId: z.string(),
  order: z
    .object({
      id: z.string(),
      userId: z.number().int(),
      sku: z.string(),
      quantity: z.number().int(),
      status: z.string(),
      seq: z.number().int(),
      mode: orderModeSchema,
      createdAt: isoTime,
      updatedAt: isoTime,
    })
    .nullable(),
  /** The order's events in the outbox, in id order (empty for naive orders). */
  outbox: z.array(outboxRowSchema),
  /** Every delivery the consumer saw for the order (partition/offset = where it sat in Kafka). */
  deliveries: z.array(
    z.object({
      id: bigId,
      consumer: z.string(),
      eventId: z.string(),
      eventType: z.string(),
      seq: z.number().int().nullable(),
      topic: z.string(),
      partition: z.number().int(),
      offset: bigId,
      outcome: deliveryOutcomeSchema,
      fifoViolation: z.boolean(),
      receivedAt: isoTime,
    }),
  ),
  inbox: z.array(
    z.object({
      consumer: z.string(),
      eventId: z.string(),
      topic: z.string(),
      partition: z.number().int().nullable(),
      offset: bigId.nullable(),
      processedAt: isoTime,
    }),
  ),
  reservations: z.array(
    z.object({
      id: bigId,
      sku: z.string(),
      quantity: z.number().int(),
      eventId: z.string(),
      releasedAt: isoTime.nullable(),
      createdAt: isoTime,
    }),
  ),
  /**
   * Where the spans come from: the dashboard's own OTLP/HTTP receiver (POST /v1/traces).
   * Nothing received means tracing is off (or exports elsewhere); traces is then empty.
   */
  tracing: z.object({
    spansReceived: z.number().int(),
    /** Traces dropped from the dashboard's bounded window, oldest first. */
    tracesEvicted: z.number().int(),
    lastReceivedAt: isoTime.nullable(),
  }),
  /**
   * Per outbox event with a stored traceparent whose trace reached the dashboard: the
   * legs commit → outbox → produce → consume → reservation read off its spans (a leg
   * is null while its spans are missing; produce and consume both start at the send,
   * see traces/legs.ts) and every consumer handling (later ones are duplicates the
   * inbox caught).
   */
  traces: z.array(
    z.object({
      eventId: z.string(),
      eventType: z.string(),
      traceId: z.string(),
      spans: z.number().int(),
      services: z.array(z.string()),
      legs: z.array(
        z
          .object({
            leg: z.enum(['commit', 'outbox', 'produce', 'consume', 'reservation']),
            from: isoTime,
            ms: z.number(),
          })
          .nullable(),
      ),
      deliveries: z.array(
        z.object({ service: z.string(), at: isoTime, duplicate: z.boolean().nullable() }),
      ),
    }),
  ),
  /** One entry per step, in order, for a stepper UI: done when that step has a row. */
  steps: z.array(
    z.object({
      step: z.enum(['order', 'outbox', 'kafka', 'inbox', 'reservation']),
      done: z.boolean(),
      at: isoTime.nullable(),
      detail: z.string(),
    }),
  ),
});
export type Journey = z.infer<typeof journeySchema>;

/** GET /api/audit: the lab's audit() over the whole database (full scans: on demand only). */
export const auditResponseSchema = z.object({
  orders: z.number().int(),
  ordersWithoutEvents: z.number().int(),
  phantomEvents: z.number().int(),
  duplicatesDelivered: z.number().int(),
  duplicatesCaught: z.number().int(),
  doubleProcessed: z.number().int(),
  fifoViolations: z.number().int(),
  consumerDeadLettered: z.number().int(),
  outboxDeadLettered: z.number().int(),
  reservationMismatches: z.number().int(),
  pending: z.number().int(),
  lagSeconds: z.number(),
  settleSeconds: z.number(),
  tookMs: z.number(),
  /**
   * Outbox rows marked sent whose event never reached the consumer (the acks = 1 loss;
   * empty with acks = all once the consumer caught up): how many, and the first 100 with
   * the partition and offset the broker acknowledged for each (offset null when the relay
   * recorded none: CDC, or a row sent before core's migration 000009). Absent from older
   * servers.
   */
  sentNotDelivered: z
    .object({
      count: z.number().int(),
      rows: z.array(
        z.object({
          id: bigId,
          aggregateId: z.string(),
          eventType: z.string(),
          topic: z.string().nullable(),
          sentAt: isoTime,
          partition: z.number().int(),
          offset: bigId.nullable(),
        }),
      ),
    })
    .optional(),
});
export type AuditResponse = z.infer<typeof auditResponseSchema>;

/** GET /api/stats: the latest StatsMessage (for a first paint before the socket connects). */
export const statsResponseSchema = statsMessageSchema;

/** GET /api/events?limit=N (1..200, default 50): the last feed lines, oldest first. */
export const eventsResponseSchema = z.object({ events: z.array(feedEventSchema) });
export type EventsResponse = z.infer<typeof eventsResponseSchema>;

/** The REST routes, for clients. Control routes need the token when one is configured. */
export const API_ROUTES = {
  state: { method: 'GET', path: '/api/state', control: false },
  stats: { method: 'GET', path: '/api/stats', control: false },
  events: { method: 'GET', path: '/api/events', control: false },
  outbox: { method: 'GET', path: '/api/outbox', control: false },
  journey: { method: 'GET', path: '/api/orders/:id/journey', control: false },
  audit: { method: 'GET', path: '/api/audit', control: false },
  armFailurePoint: { method: 'POST', path: '/api/failure-points/:name', control: true },
  mode: { method: 'PUT', path: '/api/mode', control: true },
  traffic: { method: 'PUT', path: '/api/traffic', control: true },
  relay: { method: 'PUT', path: '/api/relay', control: true },
  acks: { method: 'PUT', path: '/api/acks', control: true },
  reset: { method: 'POST', path: '/api/reset', control: true },
  requeue: { method: 'POST', path: '/api/outbox/:id/requeue', control: true },
} as const;
