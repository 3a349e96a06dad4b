/** @outbox/soak: the chaos soak (`npm run soak`) and its fault schedule. */
export { runSoak, formatReport, type SoakOptions, type SoakReport } from './soak.ts';
export {
  faultSchedule,
  describeFault,
  parseFaultKinds,
  FAULT_KINDS,
  type FaultKind,
  type ScheduledFault,
} from './schedule.ts';
export { parseSoakArgs, USAGE, USAGE_LINE, UsageError, type SoakArgs } from './args.ts';
export { SoakLinks, PROXIED_PROCESSES, type ProxiedProcess, type LinkKind } from './links.ts';
export { checkTopic, type TopicCheck } from './topic-check.ts';
export { ProgressWatch, sampleProgress, type ProgressSample, type Stall } from './watch.ts';
export { seededRandom } from './prng.ts';
export { backlog, waitDrained, type Backlog } from './drain.ts';
