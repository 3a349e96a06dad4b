/** @outbox/soak: the chaos soak (`npm run soak`) and its fault schedule. */
export { runSoak, formatReport, type SoakOptions, type SoakReport } from './soak.ts';
export { faultSchedule, FAULT_KINDS, type FaultKind, type ScheduledFault } from './schedule.ts';
export { seededRandom } from './prng.ts';
export { backlog, waitDrained, type Backlog } from './drain.ts';
