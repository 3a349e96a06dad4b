/**
 * What the proxy does to the bytes on its links. Each is a fault a real network shows
 * and the code under test cannot tell from the real thing, because it is one:
 * - `pass`: forward both ways.
 * - `delay`: forward both ways, each chunk `ms` later (order kept).
 * - `drop-responses`: forward client → server, discard server → client: the server
 *   acted (a batch appended, a row updated) and the client never hears of it.
 * - `black-hole`: a link gone silent, no reset: nothing is read or forwarded either
 *   way, nothing is closed. As with TCP's retransmission, the bytes held while silent
 *   arrive if the link comes back (`pass`); `reset` ends them.
 * - `reset`: every open link is reset (RST) now, and every new one as it arrives.
 */
export type FaultMode =
  | { kind: 'pass' }
  | { kind: 'delay'; ms: number }
  | { kind: 'drop-responses' }
  | { kind: 'black-hole' }
  | { kind: 'reset' };

export const FAULT_MODE_KINDS = ['pass', 'delay', 'drop-responses', 'black-hole', 'reset'] as const;
export type FaultModeKind = (typeof FAULT_MODE_KINDS)[number];

/** Parses "pass", "delay:250", "drop-responses", "black-hole", "reset". */
export function parseFaultMode(text: string): FaultMode {
  const [kind, arg] = text.split(':', 2);
  switch (kind) {
    case 'pass':
    case 'drop-responses':
    case 'black-hole':
    case 'reset':
      if (arg !== undefined) throw new Error(`fault mode ${kind} takes no argument`);
      return { kind };
    case 'delay': {
      const ms = Number(arg);
      if (!Number.isInteger(ms) || ms < 0)
        throw new Error(`fault mode delay needs milliseconds, e.g. delay:250 (got ${text})`);
      return { kind, ms };
    }
    default:
      throw new Error(`unknown fault mode "${text}" (one of ${FAULT_MODE_KINDS.join(', ')})`);
  }
}

export function describeFaultMode(mode: FaultMode): string {
  return mode.kind === 'delay' ? `delay:${mode.ms}` : mode.kind;
}
