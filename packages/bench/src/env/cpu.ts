import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU accounting from /proc, to say what a run was limited by: how busy the machine
 * was, and how much of it PostgreSQL (every `postgres` process: the shared server),
 * the Kafka broker (its pid) and the run's own processes used. In % of one core.
 */
export interface CpuSnapshot {
  at: number;
  machineBusy: number;
  machineTotal: number;
  /** Ticks per pid, per group. */
  byGroup: Record<string, Map<number, number>>;
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function machine(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  const total = v.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

function processTicks(pid: number): { comm: string; ticks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    // utime and stime are fields 14 and 15 of the stat line (11 and 12 after comm).
    return { comm, ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** Groups: 'postgres' by name; others by the pids given (e.g. kafka, publishers). */
export function cpuSnapshot(groups: Record<string, number[]> = {}): CpuSnapshot {
  const m = machine();
  const byGroup: Record<string, Map<number, number>> = { postgres: new Map() };
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const p = processTicks(Number(entry));
    if (p?.comm === 'postgres') byGroup.postgres!.set(Number(entry), p.ticks);
  }
  for (const [name, pids] of Object.entries(groups)) {
    const m = new Map<number, number>();
    for (const pid of pids) {
      const p = processTicks(pid);
      if (p) m.set(pid, p.ticks);
    }
    byGroup[name] = m;
  }
  return { at: performance.now(), machineBusy: m.busy, machineTotal: m.total, byGroup };
}

/** % of one core used between two snapshots, per group, and by the whole machine. */
export function cpuUse(a: CpuSnapshot, b: CpuSnapshot): Record<string, number> {
  const seconds = (b.at - a.at) / 1000;
  const cores = (b.machineTotal - a.machineTotal) / TICKS_PER_SECOND / seconds;
  const out: Record<string, number> = {
    machine: ((b.machineBusy - a.machineBusy) / (b.machineTotal - a.machineTotal)) * cores * 100,
  };
  for (const [name, after] of Object.entries(b.byGroup)) {
    // A process that started in between counts from zero; one that ended is lost
    // (a short-lived backend's last ticks): an undercount, never a negative.
    const before = a.byGroup[name] ?? new Map<number, number>();
    let ticks = 0;
    for (const [pid, t] of after) ticks += t - (before.get(pid) ?? 0);
    out[name] = (ticks / TICKS_PER_SECOND / seconds) * 100;
  }
  return out;
}
