import type { Pool } from 'pg';
import type { ProcessStatus, Replica } from '../contract.ts';

interface ProcessRow {
  name: string;
  kind: string;
  state: ProcessStatus['state'];
  pid: number | null;
  restarts: number;
  started_at: Date | null;
  url: string | null;
  updated_at: Date;
}

interface ReplicaRow {
  replica_id: string;
  sharded: boolean;
  shards: number[];
  heartbeat_at: Date;
  sleeping: boolean;
  alive: boolean;
}

/**
 * A relay membership row belongs to a process when its replica id is the process
 * name or ends with it minus the "publisher-" prefix: the demo runs
 * publisher-worker-1 with REPLICA_ID `<schema>-worker-1`.
 */
function ownsReplica(processName: string, replicaId: string): boolean {
  if (replicaId === processName) return true;
  const short = processName.replace(/^publisher-/, '');
  return replicaId === short || replicaId.endsWith(`-${short}`);
}

/**
 * The processes as the demo's supervisor sees them (demo_processes) with their relay
 * memberships (outbox_relay_members): two tiny tables, read whole.
 */
export async function readProcesses(
  pool: Pool,
): Promise<{ processes: ProcessStatus[]; replicas: Replica[] }> {
  const [processes, members] = await Promise.all([
    pool.query<ProcessRow>('SELECT * FROM demo_processes ORDER BY name'),
    // A sleeping relay refreshes its heartbeat only at each fallback poll (5 s), so it
    // is given the 30 s the wake-up trigger gives it (migration 000003).
    pool.query<ReplicaRow>(
      `SELECT replica_id, sharded, shards, heartbeat_at, sleeping,
              heartbeat_at > now() - CASE WHEN sleeping THEN interval '30 seconds'
                                          ELSE interval '10 seconds' END AS alive
         FROM outbox_relay_members ORDER BY replica_id`,
    ),
  ]);
  const replicas: Replica[] = members.rows.map((m) => ({
    replicaId: m.replica_id,
    sharded: m.sharded,
    shards: [...m.shards].sort((a, b) => a - b),
    heartbeatAt: m.heartbeat_at.toISOString(),
    sleeping: m.sleeping,
    alive: m.alive,
  }));
  return {
    replicas,
    processes: processes.rows.map((p) => ({
      name: p.name,
      kind: p.kind,
      state: p.state,
      pid: p.pid,
      restarts: p.restarts,
      startedAt: p.started_at?.toISOString() ?? null,
      url: p.url,
      updatedAt: p.updated_at.toISOString(),
      replicas:
        p.kind === 'publisher-worker'
          ? replicas.filter((r) => ownsReplica(p.name, r.replicaId))
          : [],
    })),
  };
}
