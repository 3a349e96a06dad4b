export {
  startSystem,
  DEFAULT_PORTS,
  type System,
  type SystemOptions,
  type SystemPorts,
  type SystemUrls,
} from './system.ts';
export { TrafficGenerator } from './traffic.ts';
export { setTrafficRate } from './traffic-setting.ts';
export { seedInventory, DEMO_SKUS } from './seed.ts';
