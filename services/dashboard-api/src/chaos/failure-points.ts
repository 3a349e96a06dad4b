import { FailurePoints, type FailurePointState as CoreState } from '@outbox/lab';
import type { Pool } from 'pg';
import {
  type ArmRequest,
  type FailurePointInfo,
  type FailurePointName,
  type FailurePointState,
} from '../contract.ts';
import { FAILURE_POINTS } from '../teaching/index.ts';
import { HttpError } from '../http/errors.ts';

/** Seconds a window point (the Kafka outage) stays on when the request names none. */
export const DEFAULT_WINDOW_SECONDS = 10;

const infoByName = new Map(FAILURE_POINTS.map((p) => [p.name, p]));

function view(info: FailurePointInfo, s: CoreState, now = Date.now()): FailurePointState {
  const until = typeof s.params.until === 'number' ? s.params.until : undefined;
  const open = until === undefined || now < until;
  return {
    ...info,
    mode: s.mode,
    remaining: s.remaining,
    params: s.params,
    fired: s.fired,
    updatedAt: s.updatedAt.toISOString(),
    activeUntil:
      until !== undefined && s.mode !== 'off' && open ? new Date(until).toISOString() : null,
    active: s.mode !== 'off' && open,
  };
}

/** The failure points as the dashboard shows and switches them (the lab's FailurePoints underneath). */
export class ChaosPanel {
  private readonly points: FailurePoints;

  constructor(pool: Pool) {
    this.points = new FailurePoints(pool);
  }

  async list(): Promise<FailurePointState[]> {
    const states = await this.points.list();
    return states.flatMap((s) => {
      const info = infoByName.get(s.name as FailurePointName);
      return info ? [view(info, s)] : [];
    });
  }

  /**
   * Arms or disarms one point. Shots take once / times N / on / off; switches on /
   * off; a window (the outage) is on for `seconds`, stored as params {until, seconds}
   * as the chaos CLI does.
   */
  async arm(name: FailurePointName, request: ArmRequest): Promise<FailurePointState> {
    const info = infoByName.get(name);
    if (!info) throw new HttpError(404, `unknown failure point ${name}`);
    const { mode } = request;
    if (info.kind !== 'shot' && (mode === 'once' || mode === 'times'))
      throw new HttpError(400, `${name} is a ${info.kind}: mode must be on or off`);
    if (mode === 'times' && request.times === undefined)
      throw new HttpError(400, 'mode times needs times (1..1000)');
    if (request.seconds !== undefined && info.kind !== 'window')
      throw new HttpError(400, `${name} takes no seconds`);
    let params: Record<string, unknown> = {};
    if (info.kind === 'window' && mode === 'on') {
      const seconds = request.seconds ?? DEFAULT_WINDOW_SECONDS;
      params = { until: Date.now() + seconds * 1000, seconds };
    }
    const state = await this.points.arm(name, {
      mode,
      ...(request.times !== undefined ? { times: request.times } : {}),
      params,
    });
    return view(info, state);
  }
}
