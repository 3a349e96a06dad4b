import type pg from 'pg';
import { outboxState } from '@outbox/core';
import {
  FailurePoint,
  FailurePoints,
  readRelayMode,
  recordActiveRelay,
  recordRelayPhase,
  requestRelay,
  type RelayKind,
} from '@outbox/lab';
import {
  connectState,
  startConnect,
  stopConnect,
  type ConnectEndpoints,
  type StackOptions,
} from '@outbox/dev-stack';

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
  const running = async () => {
    const state = await connectState(options.stack);
    return state?.schema === schema ? state : undefined;
  };
  const ours = async () => (await running()) !== undefined;
  // The dashboard's "Kill Kafka Connect" and "Connect down 60 s" (failure points):
  // Connect is this process's child, so the handover carries them out.
  const points = new FailurePoints(pool, { refreshMs: 500 });
  await points.start();
  if (await ours()) await stopConnect(options.stack);
  await requestRelay(pool, 'polling');
  await recordActiveRelay(pool, { relay: 'polling' });
  await recordRelayPhase(pool, null);

  let inFlight: Promise<void> = Promise.resolve();
  let busy = false;
  let stopped = false;

  const wantedNow = async (): Promise<RelayKind> => (await readRelayMode(pool)).wanted;

  const recordCdc = (connect: ConnectEndpoints) =>
    recordActiveRelay(pool, {
      relay: 'cdc',
      slot: connect.slot,
      topic: options.topic,
      connector: connect.connector,
      restUrl: connect.restUrl,
    });

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
    await recordCdc(connect);
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

  /**
   * Under CDC: carries out the Connect failure points, and starts Connect again when
   * it is not running (a SIGKILL from outside, the kill button, the end of a down
   * window) on its slot and saved offsets: it re-sends what followed its last flush.
   * A stop here never drops the slot: the WAL since it is what Connect resumes from.
   */
  const superviseConnect = async () => {
    const state = await running();
    if (points.isActive(FailurePoint.connectDown)) {
      if (state) {
        log('relay       connect.down: stopping Kafka Connect; the slot keeps the WAL');
        await stopConnect(options.stack, { keepSlot: true });
      }
      return;
    }
    if (state && (await points.fire(FailurePoint.connectKillMidStream))) {
      log(`relay       connect.kill_mid_stream: SIGKILL to Kafka Connect (pid ${state.pid})`);
      process.kill(-state.pid, 'SIGKILL');
      return;
    }
    if (!state) {
      log('relay       Kafka Connect is not running: starting it again');
      // Its REST port may have changed: the dashboard reads Connect's state there.
      await recordCdc(await startConnect(connectOpts));
    }
  };

  const check = async () => {
    const mode = await readRelayMode(pool);
    if (mode.wanted === mode.active.relay) {
      if (mode.active.relay === 'cdc') await superviseConnect();
      return;
    }
    if (mode.wanted === 'cdc') await toCdc();
    else await toPolling();
  };

  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    inFlight = check()
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
    idle: () => inFlight,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await inFlight;
      await points.stop();
      if (await ours()) await stopConnect(options.stack);
    },
  };
}
