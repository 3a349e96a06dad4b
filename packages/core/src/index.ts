/**
 * @outbox/core: the Transactional Outbox and Inbox patterns for PostgreSQL + Kafka.
 *
 * Write: `withTransaction(pool, c => { business write; outbox.append(c, event) })`.
 * Relay: `new OutboxRelay({ pool, producer, topics }).start()`.
 * Consume: `withTransaction(pool, c => handleOnce(c, delivery, effect))`.
 */
export * from './errors.ts';
export { withTransaction, isQueryTimeout, QUERY_TIMEOUT_MESSAGE } from './db/transaction.ts';
export { migrate, loadMigrations, type Migration } from './migrate/migrate.ts';
export { createLogger, crashNow, silentLogger, type Logger } from './logger.ts';
export {
  DEFAULT_MAX_PAYLOAD_BYTES,
  serializeEvent,
  type OutboxEvent,
  type SerializedEvent,
} from './outbox/event.ts';
export {
  OutboxWriter,
  type OutboxWriterOptions,
  type EventValidator,
  type AppendedEvent,
} from './outbox/writer.ts';
export { OutboxRelay, type RelayOptions, type RelayHooks, type TickResult } from './relay/relay.ts';
export { ShardAssigner, SHARD_COUNT } from './relay/sharding.ts';
export { resolveTopic, knownTopics, type TopicMap } from './relay/topics.ts';
export { toMessage, isRowError, isTopicUnavailableError } from './relay/publish.ts';
export { ISOLATION_MAX_SENDS } from './relay/isolate.ts';
export { relayPartitioner, checkAcknowledged } from './relay/acknowledgement.ts';
export {
  sendAcknowledged,
  needsRenewal,
  type SendAcknowledgedOptions,
} from './relay/acknowledged-send.ts';
export {
  requeue as requeueQuery,
  pendingStats,
  claimBatch,
  markSent,
  type OutboxRow,
} from './relay/sql.ts';
export { handleOnce, inbox, type InboxDelivery, type InboxOutcome } from './inbox/inbox.ts';
export { OutboxMetrics } from './metrics/metrics.ts';
export { backoffMs, BACKOFF_JITTER } from './relay/backoff.ts';
export {
  resolveRelayTimings,
  longestSilenceMs,
  RelayTimingError,
  MEMBER_TTL_MARGIN_MS,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_FAILURE_BACKOFF_MAX_MS,
  type RelayTimings,
} from './relay/timings.ts';
export {
  FailurePoints,
  FailurePoint,
  FAILURE_POINT_NAMES,
  type FailurePointName,
  type FailurePointState,
  type FailureMode,
  type ArmOptions,
} from './chaos/failure-points.ts';
export * from './events/schemas.ts';
export {
  validateEvent,
  readEvent,
  latestVersion,
  isEventType,
  UnknownEventError,
} from './events/registry.ts';
export { checkCompatible, type CompatibilityProblem } from './events/compatibility.ts';
export { audit, type AuditReport, type AuditOptions } from './audit/auditor.ts';
export {
  baseConfigSchema,
  parseConfig,
  pgConfig,
  DATABASE_TIMEOUT_DEFAULTS,
  demoTopics,
  maskUrl,
  type BaseConfig,
} from './config/base.ts';
export { demoTopicSpecs, type TopicSpec } from './config/topics.ts';
export { FaultySocketFactory } from './kafka/faulty-socket.ts';
export {
  parseKafkaRoutes,
  routeSockets,
  directSocketFactory,
  type KafkaRoutes,
} from './kafka/routes.ts';
export { createPool, type PoolOptions } from './service/pool.ts';
export { createOpsServer, listenOrExit, closeServer, type HealthBody } from './service/ops-http.ts';
export {
  onShutdown,
  exitOnStartupSignal,
  type ShutdownPlan,
  type Shutdown,
} from './service/shutdown.ts';
export {
  kafkaClient,
  kafkaSecurity,
  ensureTopic,
  ensureTopics,
  pinoLogCreator,
  type KafkaConnectionConfig,
} from './service/kafka.ts';
export { unstorableText } from './db/text.ts';
export { clientText, clientTextProblem, type ClientTextOptions } from './service/client-text.ts';
export {
  parseClientJson,
  byteSize,
  ClientJsonError,
  DEFAULT_MAX_JSON_DEPTH,
  type ClientInputIssue,
  type ClientJsonOptions,
} from './service/client-json.ts';
export { clientErrorOf, type ClientErrorAnswer } from './service/http-client-errors.ts';
