// Test support shared by every package: one version of each helper, options where they differ.
export { createTestDb, TEST_SKUS, type TestDb, type TestDbOptions } from './db.ts';
export {
  createTopicPrefix,
  createTopics,
  decodeHeaders,
  demoTopicPartitions,
  eventIds,
  readTopic,
  testKafka,
  type ReadOptions,
  type Received,
} from './kafka.ts';
export {
  startService,
  stopAll,
  type LogLine,
  type ServiceProcess,
  type StartOptions,
} from './process.ts';
export { sleep, waitFor } from './wait.ts';
export { describeDemoTopicsCreatedBy, type Stoppable } from './demo-topics.ts';
export { dropRole, listenersOn, secretRole } from './exposure.ts';
export { rawRequest, type RawRequest, type RawResponse } from './raw-http.ts';
export {
  startOtlpReceiver,
  spansOfExport,
  type OtlpReceiver,
  type ReceivedSpan,
  type ReceivedSpanKind,
} from './otlp-receiver.ts';
export { freeSystemPorts, type TestSystemPorts } from './ports.ts';
