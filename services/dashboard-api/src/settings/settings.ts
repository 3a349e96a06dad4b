import type { Pool } from 'pg';
import {
  relayAcksFrom,
  relayModeFrom,
  RELAY_ACKS_KEY,
  RELAY_SETTING_KEYS,
  writeDemoSetting,
  type RelayMode,
} from '@outbox/lab';
import { orderModeSchema, type KafkaView, type OrderMode, type Settings } from '../contract.ts';

/** The demo setting its broker chaos records its actions in (packages/demo broker-chaos.ts). */
const BROKER_ACTIONS_KEY = 'broker_actions';

/** Mode for new orders when no `order_mode` setting exists (order-api's DEFAULT_MODE). */
const DEFAULT_MODE: OrderMode = 'outbox';

/**
 * The demo settings the dashboard switches: `order_mode` (order-api), `traffic_rate`
 * (the demo) and the relay (the demo's handover; @outbox/lab's relay-mode.ts), in one
 * query. `relay` is the whole relay record: the stats tick needs its slot for the CDC
 * panel, the wire only what publishes.
 */
export async function readSettingsAndRelay(
  pool: Pool,
): Promise<{ settings: Settings; relay: RelayMode; brokerActions: KafkaView['actions'] }> {
  const { rows } = await pool.query<{ key: string; value: unknown }>(
    'SELECT key, value FROM demo_settings WHERE key = ANY($1::text[])',
    [['order_mode', 'traffic_rate', RELAY_ACKS_KEY, BROKER_ACTIONS_KEY, ...RELAY_SETTING_KEYS]],
  );
  const byKey = new Map(rows.map((r) => [r.key, r.value]));
  const mode = orderModeSchema.safeParse(byKey.get('order_mode'));
  const rate = Number(byKey.get('traffic_rate') ?? 0);
  const relay = relayModeFrom(byKey);
  return {
    settings: {
      mode: mode.success ? mode.data : DEFAULT_MODE,
      trafficRate: Number.isFinite(rate) ? rate : 0,
      relay: { wanted: relay.wanted, active: relay.active.relay, phase: relay.phase },
      acks: relayAcksFrom(byKey.get(RELAY_ACKS_KEY)),
    },
    relay,
    brokerActions: brokerActionsFrom(byKey.get(BROKER_ACTIONS_KEY)),
  };
}

function brokerActionsFrom(value: unknown): { at: string; text: string }[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (a): a is { at: string; text: string } =>
      typeof a === 'object' &&
      a !== null &&
      typeof (a as { at?: unknown }).at === 'string' &&
      typeof (a as { text?: unknown }).text === 'string',
  );
}

export async function readSettings(pool: Pool): Promise<Settings> {
  return (await readSettingsAndRelay(pool)).settings;
}

/** Upserts one of the dashboard's settings (the relay's go through requestRelay). */
export async function writeSetting(
  pool: Pool,
  key: 'order_mode' | 'traffic_rate',
  value: unknown,
): Promise<void> {
  await writeDemoSetting(pool, key, value);
}
