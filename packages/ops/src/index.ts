/**
 * @outbox/ops: operating the outbox. Retention in bounded batches or by daily
 * partitions, the background job that runs them, replay of sent events, dead-letter
 * requeue. The CLI is `npm run ops -- <command>`; the alert rules are in alerts/.
 */
export { parseDuration } from './duration.ts';
export {
  deleteInBatches,
  type RetentionBatchOptions,
  type RetentionResult,
  type RetentionTable,
} from './cleanup/retention.ts';
export {
  RetentionJob,
  runRetention,
  checkPolicy,
  type RetentionPolicy,
  type RunReport,
  type RetentionJobOptions,
} from './cleanup/job.ts';
export { enablePartitioning, type EnableOptions, type EnableResult } from './partitions/enable.ts';
export {
  maintainPartitions,
  type MaintainOptions,
  type MaintainResult,
} from './partitions/maintain.ts';
export { isPartitioned, partitions, type PartitionInfo } from './partitions/catalog.ts';
export { dayOf, type Day } from './partitions/days.ts';
export {
  replay,
  type ReplayOptions,
  type ReplayRange,
  type ReplayReport,
} from './replay/replay.ts';
export {
  listDeadLetters,
  requeueDeadLetters,
  type DeadLetteredEvent,
} from './dead-letters/dead-letters.ts';
