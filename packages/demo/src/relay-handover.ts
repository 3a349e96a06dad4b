import type pg from 'pg';
import { outboxState } from '@outbox/core';
import {
  readRelayMode,
  recordActiveRelay,
  recordRelayPhase,
  requestRelay,
  type RelayKind,
} from '@outbox/lab';
import { connectState, startConnect, stopConnect, type StackOptions } from '@outbox/dev-stack';

export interface RelayHandoverOptions {
  pool: pg.Pool;
  schema: string;
  /** The topic Debezium routes the outbox to (the demo's orders topic). */
  topic: string;
  /** Which stack's Connect (the system's dev-stack options). */
  stack: StackOptions;
  log: (line: string) => void;
  /** How often the wanted relay is read (default 500 ms). */
  everyMs?: number;
}

export interface RelayHandover {
  /** Resolves once no handover is running (the tests wait on it). */
  idle(): Promise<void>;
  /** Stops following; Connect is stopped (its slot dropped) if it publishes. */
  stop(): Promise<void>;
}

/**
 * Carries out a switch of the demo's relay, polling relay ⇄ Debezium CDC, when the
 * `relay_wanted` setting changes (the dashboard, `npm run chaos -- relay cdc`). Only
 * one relay publishes in the steady state; a switch loses nothing and may duplicate
 * (the inbox catches it):
 *
 * polling → CDC
 * 1. Start Kafka Connect: its slot is created, and Debezium publishes every outbox
 *    insert committed after that point (`snapshot.mode = no_data`).
 * 2. Read the highest outbox id M. Every row committed before the slot has id ≤ M (it
 *    was visible to that read). The workers go on relaying until no row ≤ M is pending:
 *    then nothing committed before the slot is left to them. Meanwhile both publish
 *    what was committed after the slot: those are the switch's duplicates.
 * 3. Record `relay_active = cdc`: the workers stop relaying and confirm from the slot
 *    (core's CdcConfirmer), so every pending row left is one Debezium captured.
 *
 * CDC → polling
 * 1. Stop Connect (SIGTERM: it flushes its offsets) and drop its slot: nothing
 *    publishes for a moment.
 * 2. Record `relay_active = polling`: the workers relay every row still pending, which
 *    includes what Debezium published after the confirmer's last round (duplicates).
 *
 * A new demo starts on the polling relay: a Connect left from an earlier run of the
 * same schema is stopped first. The dev-stack runs one Connect, so one system at a
 * time can be on CDC.
 */
export async function followRelayHandover(options: RelayHandoverOptions): Promise<RelayHandover> {
  const { pool, schema, log } = options;
  const connectOpts = { ...options.stack, log, schema, topic: options.topic };
  const ours = async () => (await connectState(options.stack))?.schema === schema;
  if (await ours()) await stopConnect(options.stack);
  await requestRelay(pool, 'polling');
  await recordActiveRelay(pool, { relay: 'polling' });
  await recordRelayPhase(pool, null);

  let running: Promise<void> = Promise.resolve();
  let busy = false;
  let stopped = false;

  const wantedNow = async (): Promise<RelayKind> => (await readRelayMode(pool)).wanted;

  const toCdc = async () => {
    await recordRelayPhase(pool, 'starting Kafka Connect (Debezium)');
    log('relay       switching to Debezium CDC: starting Kafka Connect');
    const connect = await startConnect(connectOpts);
    const { rows } = await pool.query<{ m: string }>(
      'SELECT coalesce(max(id), 0)::text AS m FROM outbox',
    );
    const ceiling = rows[0]!.m;
    await recordRelayPhase(pool, `the polling relay drains the rows up to id ${ceiling}`);
    for (;;) {
      const left = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM outbox WHERE id <= $1 AND ${outboxState('pending')}`,
        [ceiling],
      );
      if (left.rows[0]!.n === 0) break;
      if (stopped || (await wantedNow()) !== 'cdc') {
        log('relay       switch to CDC called off: the polling relay stays');
        await stopConnect(options.stack);
        await recordRelayPhase(pool, null);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await recordActiveRelay(pool, { relay: 'cdc', slot: connect.slot, topic: options.topic });
    await recordRelayPhase(pool, null);
    log(
      `relay       Debezium publishes ${schema}.outbox; the workers confirm from ${connect.slot}`,
    );
  };

  const toPolling = async () => {
    await recordRelayPhase(pool, 'stopping Kafka Connect, dropping its slot');
    log('relay       switching to the polling relay: stopping Kafka Connect');
    await stopConnect(options.stack);
    await recordActiveRelay(pool, { relay: 'polling' });
    await recordRelayPhase(pool, null);
    log('relay       the polling relay publishes again');
  };

  const check = async () => {
    const mode = await readRelayMode(pool);
    if (mode.wanted === mode.active.relay) {
      // Connect died under CDC (a SIGKILL, the dashboard's button): start it again on
      // its slot and saved offsets; it re-sends what followed its last offset flush.
      if (mode.active.relay === 'cdc' && !(await ours())) {
        log('relay       Kafka Connect is not running: starting it again');
        await startConnect(connectOpts);
      }
      return;
    }
    if (mode.wanted === 'cdc') await toCdc();
    else await toPolling();
  };

  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    running = check()
      .catch(async (error: unknown) => {
        log(`relay       switch failed: ${(error as Error).message}`);
        // Back to what publishes now, so the dashboard does not show a switch that
        // is not happening; the user may ask again.
        const active = await readRelayMode(pool).catch(() => undefined);
        if (active) await requestRelay(pool, active.active.relay).catch(() => undefined);
        await recordRelayPhase(pool, `switch failed: ${(error as Error).message}`).catch(
          () => undefined,
        );
      })
      .finally(() => {
        busy = false;
      });
  }, options.everyMs ?? 500);
  timer.unref();

  return {
    idle: () => running,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      if (await ours()) await stopConnect(options.stack);
    },
  };
}
