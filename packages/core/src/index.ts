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
export { outboxState, type OutboxState } from './outbox/state.ts';
export {
  OutboxWriter,
  type OutboxWriterOptions,
  type EventValidator,
  type AppendedEvent,
  type AppendedWith,
  type ChangeStatement,
} from './outbox/writer.ts';
export { OutboxRelay, type RelayOptions, type RelayHooks, type TickResult } from './relay/relay.ts';
export { ShardAssigner, SHARD_COUNT } from './relay/sharding.ts';
export { resolveTopic, knownTopics, type TopicMap } from './relay/topics.ts';
export { toMessage, isRowError, isTopicUnavailableError, type RelayAcks } from './relay/publish.ts';
export { ISOLATION_MAX_SENDS } from './relay/isolate.ts';
export {
  relayPartitioner,
  checkAcknowledged,
  acknowledgedPositions,
  type LogPosition,
} from './relay/acknowledgement.ts';
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
export {
  claimInbox,
  handleEachOnce,
  handleOnce,
  inbox,
  type InboxDelivery,
  type InboxOutcome,
} from './inbox/inbox.ts';
export { OutboxMetrics } from './metrics/metrics.ts';
export { slotLag, readSlotLag, type SlotLag } from './cdc/slot-lag.ts';
export { CdcConfirmer, type CdcConfirmerOptions, type ConfirmResult } from './cdc/confirmer.ts';
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
  EventRegistry,
  UnknownEventError,
  type EventSchemas,
  type Upcasters,
} from './events/registry.ts';
export { checkCompatible, type CompatibilityProblem } from './events/compatibility.ts';
export { createPool, type PoolOptions } from './db/pool.ts';
export {
  pgConfig,
  DATABASE_TIMEOUT_DEFAULTS,
  type DatabaseTimeouts,
  type DatabaseTarget,
} from './db/pg-config.ts';
export { unstorableText } from './db/text.ts';
export { contextFrom, traceHeaders } from './tracing.ts';
