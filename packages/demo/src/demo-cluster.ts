import { join } from 'node:path';
import { findRepoRoot, startCluster, type KafkaCluster } from '@outbox/dev-stack';

/**
 * Where `npm run demo -- --brokers 3` keeps its cluster: its own data dir and ports,
 * apart from the soak's `.data/cluster` and the tests' (each test file passes its own).
 */
export const DEMO_CLUSTER_DIR = join(findRepoRoot(), '.data', 'demo-cluster');

/**
 * Starts (or reuses) the 3-node KRaft cluster for a 3-broker system: pass the result to
 * startSystem's `cluster`, and stop it after the system (`cluster.stop()`).
 */
export function startDemoCluster(
  options: { dataDir?: string; log?: (line: string) => void } = {},
): Promise<KafkaCluster> {
  return startCluster({
    dataDir: options.dataDir ?? DEMO_CLUSTER_DIR,
    nodes: 3,
    ...(options.log ? { log: options.log } : {}),
  });
}
