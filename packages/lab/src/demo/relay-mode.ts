import type { Pool } from 'pg';
import { z } from 'zod';

/**
 * Which relay publishes the demo's outbox: the polling relay (publisher-worker) or
 * Debezium's CDC connector (Kafka Connect). Two demo settings:
 * - `relay_wanted`, written by the dashboard and `npm run chaos -- relay …`: what the
 *   user asked for;
 * - `relay_active`, written only by the demo's handover (packages/demo): which one
 *   publishes now, and the slot the workers confirm from while it is CDC.
 * The workers follow `relay_active`: they relay while it is polling, and under CDC
 * they run core's CdcConfirmer instead, so `sent_at` keeps its meaning.
 */
export const relayKindSchema = z.enum(['polling', 'cdc']);
export type RelayKind = z.infer<typeof relayKindSchema>;

export const activeRelaySchema = z.discriminatedUnion('relay', [
  z.object({ relay: z.literal('polling') }),
  z.object({
    relay: z.literal('cdc'),
    slot: z.string().min(1),
    topic: z.string().min(1),
    /** Kafka Connect's connector and REST address, for the dashboard's CDC panel. */
    connector: z.string().min(1).optional(),
    restUrl: z.string().url().optional(),
  }),
]);
export type ActiveRelay = z.infer<typeof activeRelaySchema>;

/** A handover in progress (null when the active relay is the wanted one and settled). */
export const relayPhaseSchema = z.string().nullable();

export interface RelayMode {
  wanted: RelayKind;
  active: ActiveRelay;
  /** What the handover is doing now, for the dashboard (null: nothing). */
  phase: string | null;
}

const POLLING: ActiveRelay = { relay: 'polling' };

/** The demo_settings keys of the relay (a caller reading more settings adds them to its query). */
export const RELAY_SETTING_KEYS = ['relay_wanted', 'relay_active', 'relay_phase'] as const;

/** The relay settings; no row (a fresh schema, a reset) means the polling relay. */
export async function readRelayMode(pool: Pool): Promise<RelayMode> {
  const { rows } = await pool.query<{ key: string; value: unknown }>(
    'SELECT key, value FROM demo_settings WHERE key = ANY($1::text[])',
    [RELAY_SETTING_KEYS],
  );
  return relayModeFrom(new Map(rows.map((r) => [r.key, r.value])));
}

/** The relay settings from demo_settings rows already read (key → value). */
export function relayModeFrom(byKey: ReadonlyMap<string, unknown>): RelayMode {
  const wanted = relayKindSchema.safeParse(byKey.get('relay_wanted'));
  const active = activeRelaySchema.safeParse(byKey.get('relay_active'));
  const phase = relayPhaseSchema.safeParse(byKey.get('relay_phase') ?? null);
  return {
    wanted: wanted.success ? wanted.data : 'polling',
    active: active.success ? active.data : POLLING,
    phase: phase.success ? phase.data : null,
  };
}

/** Asks for a relay (the dashboard, the chaos CLI); the demo's handover carries it out. */
export async function requestRelay(pool: Pool, kind: RelayKind): Promise<void> {
  await writeDemoSetting(pool, 'relay_wanted', relayKindSchema.parse(kind));
}

/** The handover's record of which relay publishes now (the workers follow it). */
export async function recordActiveRelay(pool: Pool, active: ActiveRelay): Promise<void> {
  await writeDemoSetting(pool, 'relay_active', activeRelaySchema.parse(active));
}

/** The handover's current step, shown by the dashboard; null when settled. */
export async function recordRelayPhase(pool: Pool, phase: string | null): Promise<void> {
  await writeDemoSetting(pool, 'relay_phase', phase);
}

/**
 * Upserts one demo setting (the dashboard's, the demo's); the table's trigger notifies
 * the services that follow settings at once.
 */
export async function writeDemoSetting(pool: Pool, key: string, value: unknown): Promise<void> {
  await pool.query(
    `INSERT INTO demo_settings (key, value, updated_at) VALUES ($1, $2::jsonb, now())
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
    [key, JSON.stringify(value)],
  );
}
