import type { TestProject } from 'vitest/node';
import { startE2eSystem } from './global-setup.ts';

/**
 * The specs named *.cluster.test.ts (vitest.cluster.config.ts): the system on a 3-broker
 * KRaft cluster, as `npm run demo -- --brokers 3` runs it. No Prometheus: these specs do
 * not read alerts, and three brokers already fill a small machine.
 */
export default function setup(project: TestProject) {
  return startE2eSystem(project, { brokers: 3, prometheus: false });
}
