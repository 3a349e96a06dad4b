import { readSlotLag } from '@outbox/core';
import type { ActiveRelay } from '@outbox/lab';
import type { Pool } from 'pg';
import type { CdcView } from '../contract.ts';

/** How long the tick waits for Connect's REST answer before calling it unreachable. */
const CONNECT_TIMEOUT_MS = 1_000;

/**
 * What the CDC panel shows while Debezium publishes (`active`, read with the settings
 * of the same tick; null otherwise, without a query): the slot's lag
 * and retained WAL (core's readSlotLag: under CDC nobody sets sent_at at publish time,
 * the slot is the truth) and the connector task's state from Connect's REST API.
 */
export async function readCdcView(pool: Pool, active: ActiveRelay): Promise<CdcView | null> {
  if (active.relay !== 'cdc') return null;
  const [slot, task] = await Promise.all([
    readSlotLag(pool, active.slot),
    connectTaskState(active.restUrl, active.connector),
  ]);
  return {
    slot: active.slot,
    slotExists: slot !== undefined,
    slotActive: slot?.active ?? false,
    lagBytes: slot?.lagBytes ?? 0,
    lagSeconds: slot?.lagSeconds ?? null,
    retainedBytes: slot?.retainedBytes ?? 0,
    walStatus: slot?.walStatus ?? null,
    connectTask: task,
  };
}

/** RUNNING, FAILED, … or 'unreachable' (Connect down, killed, starting). */
async function connectTaskState(restUrl?: string, connector?: string): Promise<string> {
  if (!restUrl || !connector) return 'unknown';
  try {
    const res = await fetch(`${restUrl}/connectors/${encodeURIComponent(connector)}/status`, {
      signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS),
    });
    if (!res.ok) return `http ${res.status}`;
    const body = (await res.json()) as { tasks?: { state?: string }[] };
    return body.tasks?.[0]?.state ?? 'no task';
  } catch {
    return 'unreachable';
  }
}
