export {
  startSystem,
  DEFAULT_PORTS,
  OUTBOX_RULES_FILE,
  type System,
  type SystemOptions,
  type SystemPorts,
  type SystemPrometheusOptions,
  type SystemUrls,
} from './system.ts';
export { TrafficGenerator } from './traffic.ts';
export { setTrafficRate } from './traffic-setting.ts';
export { seedInventory, DEMO_SKUS } from './seed.ts';
// The e2e specs start the system with Prometheus and take the binaries from here
// rather than depending on dev-stack themselves.
export { ensurePrometheus } from '@outbox/dev-stack';
// A 3-broker system: startDemoCluster, then startSystem({ cluster }).
export { startDemoCluster, DEMO_CLUSTER_DIR } from './demo-cluster.ts';
export type { KafkaCluster } from '@outbox/dev-stack';
export { BROKER_ACTIONS_KEY, type BrokerChaos } from './broker-chaos.ts';
