/**
 * @outbox/lab: what Outbox Lab's services share that the pattern does not need. Core
 * (@outbox/core) is the pattern alone; this package is the lab around it:
 * - demo/: the order events and their registry, the demo's topics, the auditor, the
 *   demo's tables (sql/, through migrateLab);
 * - chaos/: failure points, faulty sockets, routes to the fault proxy;
 * - shell/: the services' configuration, ops HTTP server, shutdown, Kafka client and
 *   the rule for client input.
 */
export { migrateLab } from './migrate.ts';
export {
  FailurePoints,
  FailurePoint,
  FAILURE_POINT_NAMES,
  type FailurePointName,
  type FailurePointState,
  type FailureMode,
  type ArmOptions,
  type FailurePointsOptions,
} from './chaos/failure-points.ts';
export { failurePointGate, NO_CHAOS, type FailurePointGate } from './chaos/gate.ts';
export { FaultySocketFactory } from './chaos/faulty-socket.ts';
export {
  parseKafkaRoutes,
  routeSockets,
  directSocketFactory,
  type KafkaRoutes,
} from './chaos/kafka-routes.ts';
export * from './demo/order-events.ts';
export {
  audit,
  sentNotDelivered,
  type AuditReport,
  type AuditOptions,
  type SentNotDelivered,
} from './demo/auditor.ts';
export { demoTopics, demoTopicSpecs, replicationFor, type TopicSpec } from './demo/topics.ts';
export {
  readPartitions,
  partitionRates,
  busiestPartition,
  type PartitionState,
} from './demo/partitions.ts';
export {
  readRelayMode,
  relayModeFrom,
  RELAY_SETTING_KEYS,
  writeDemoSetting,
  requestRelay,
  recordActiveRelay,
  recordRelayPhase,
  relayKindSchema,
  activeRelaySchema,
  type RelayKind,
  type ActiveRelay,
  type RelayMode,
} from './demo/relay-mode.ts';
export {
  readRelayAcks,
  writeRelayAcks,
  relayAcksFrom,
  relayAcksSettingSchema,
  RELAY_ACKS_KEY,
  type RelayAcksSetting,
} from './demo/relay-acks.ts';
export {
  baseConfigSchema,
  parseConfig,
  maskUrl,
  envBoolean,
  envHost,
  envPort,
  type BaseConfig,
} from './shell/config.ts';
export { createOpsServer, listenOrExit, closeServer, type HealthBody } from './shell/ops-http.ts';
export {
  onShutdown,
  exitOnStartupSignal,
  type ShutdownPlan,
  type Shutdown,
} from './shell/shutdown.ts';
export {
  kafkaClient,
  kafkaSecurity,
  ensureTopic,
  ensureTopics,
  pinoLogCreator,
  type KafkaConnectionConfig,
} from './shell/kafka.ts';
export { clientText, clientTextProblem, type ClientTextOptions } from './shell/client-text.ts';
export {
  parseClientJson,
  byteSize,
  ClientJsonError,
  DEFAULT_MAX_JSON_DEPTH,
  type ClientInputIssue,
  type ClientJsonOptions,
} from './shell/client-json.ts';
export { jsonBody, type JsonBodyOptions } from './shell/json-body.ts';
export { startTelemetry, telemetry, tracingWanted, type Telemetry } from './shell/telemetry.ts';
export { clientErrorOf, type ClientErrorAnswer } from './shell/http-client-errors.ts';
export {
  exportTraceRequestSchema,
  spansOf,
  traceIdOf,
  type ExportTraceRequest,
  type SpanKind,
  type SpanRecord,
} from './telemetry/otlp-json.ts';
