/**
 * @outbox/fault-proxy: a TCP proxy that the tests, the soak and the dashboard put
 * between a service and PostgreSQL or Kafka, to make the faults no failure point
 * knows of: delay, responses lost after the server acted, a silent link, a reset.
 */
export { FaultProxy, type FaultProxyOptions, type FaultProxyStats } from './proxy.ts';
export {
  parseFaultMode,
  describeFaultMode,
  FAULT_MODE_KINDS,
  type FaultMode,
  type FaultModeKind,
} from './modes.ts';
export { routedSocketFactory, parseRoutes } from './kafka-route.ts';
export { kafkaThroughProxy, type KafkaThroughProxy } from './kafka-through.ts';
export { loseNextResponse, type LostResponse } from './lost-response.ts';
