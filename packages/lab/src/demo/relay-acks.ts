import type { Pool } from 'pg';
import { z } from 'zod';
import { writeDemoSetting } from './relay-mode.ts';

/**
 * The relay's producer acks, a demo setting (`relay_acks`) like the order mode and the
 * traffic rate: the dashboard (PUT /api/acks) and `npm run chaos -- acks 1|all` write
 * it, every publisher-worker follows it within a second. 'all' is the default and the
 * only safe value; '1' is there for the 3-broker lesson (core's RelayOptions.acks says
 * why it loses events the outbox marked sent).
 */
export const relayAcksSettingSchema = z.enum(['all', '1']);
export type RelayAcksSetting = z.infer<typeof relayAcksSettingSchema>;

export const RELAY_ACKS_KEY = 'relay_acks';

/** The setting from a value read from demo_settings; anything else (no row, a reset) is 'all'. */
export function relayAcksFrom(value: unknown): RelayAcksSetting {
  const parsed = relayAcksSettingSchema.safeParse(value);
  return parsed.success ? parsed.data : 'all';
}

export async function readRelayAcks(pool: Pool): Promise<RelayAcksSetting> {
  const { rows } = await pool.query<{ value: unknown }>(
    'SELECT value FROM demo_settings WHERE key = $1',
    [RELAY_ACKS_KEY],
  );
  return relayAcksFrom(rows[0]?.value);
}

export async function writeRelayAcks(pool: Pool, acks: RelayAcksSetting): Promise<void> {
  await writeDemoSetting(pool, RELAY_ACKS_KEY, relayAcksSettingSchema.parse(acks));
}
