import type {
  ArmRequest,
  FailurePointInfo,
  KafkaView,
  OrderMode,
  RelayKind,
} from '@outbox/dashboard-api/contract';
import { armRequestFor } from '@outbox/dashboard-api/teaching';
import { brokerCount } from './kafka.ts';

/**
 * Why a failure point does nothing now, if it does nothing: 'mode' and 'cdc' points can
 * still be armed (they wait for their mode); a 'cluster' point cannot run at all on one
 * broker, so its button is disabled.
 */
export type NotNow =
  | { kind: 'mode'; needs: 'naive' | 'outbox' }
  | { kind: 'cdc' }
  | { kind: 'cluster'; brokers: number };

export function notNow(
  info: Pick<FailurePointInfo, 'appliesTo'>,
  ctx: { mode: OrderMode | undefined; relay: RelayKind | undefined; kafka: KafkaView | undefined },
): NotNow | null {
  switch (info.appliesTo) {
    case 'both':
      return null;
    case 'cdc':
      return ctx.relay !== undefined && ctx.relay !== 'cdc' ? { kind: 'cdc' } : null;
    case 'cluster': {
      const brokers = brokerCount(ctx.kafka);
      return brokers === 3 ? null : { kind: 'cluster', brokers };
    }
    case 'naive':
    case 'outbox':
      return ctx.mode !== undefined && ctx.mode !== info.appliesTo
        ? { kind: 'mode', needs: info.appliesTo }
        : null;
  }
}

/** A window's label without its default length ("Stop a follower 20 s"), when a field sets it. */
export const labelWithoutSeconds = (label: string): string => label.replace(/\s+\d+\s*s$/, '');

/** The seconds a field holds, kept within what the API takes (1..600); null when not a number. */
export function secondsFrom(text: string): number | null {
  if (!/^\s*\d+\s*$/.test(text)) return null;
  const n = Number(text);
  return n >= 1 && n <= 600 ? n : null;
}

/**
 * The arm request of a click: the point's own (a shot once, a window for its default
 * length, a switch flipped), or a window opened for the seconds of its field.
 */
export function armRequestWith(
  info: Pick<FailurePointInfo, 'kind' | 'name'>,
  active: boolean,
  fieldSeconds: number | null | undefined,
): ArmRequest {
  if (info.kind === 'window' && !active && fieldSeconds)
    return { mode: 'on', seconds: fieldSeconds };
  return armRequestFor(info, active);
}
