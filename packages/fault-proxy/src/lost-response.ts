import type { FaultProxy } from './proxy.ts';

/** The "lost response" fault, armed on a proxy (see loseNextResponse). */
export interface LostResponse {
  /**
   * Resolves once the server answered the next request and that answer was dropped:
   * the server acted. From then on every link is reset and new ones are refused.
   */
  acted: Promise<void>;
  /** Lets links through again (`pass`); safe before `acted`, which then never resolves. */
  heal(): void;
}

/**
 * Arms the ambiguous fault of an outbox: the next request reaches the server, the
 * server acts and answers, the answer is dropped, and the client cannot ask again
 * (its link is reset, reconnects are refused) until `heal()`. Switching to `reset` on
 * the server's answer, not on the request, makes sure the server acted: a reset sent
 * right after the request can overtake it on the server's side.
 */
export function loseNextResponse(proxy: FaultProxy, { pollMs = 2 } = {}): LostResponse {
  const droppedBefore = proxy.stats().bytesDropped;
  let timer: NodeJS.Timeout | undefined;
  let healed = false;
  proxy.setMode({ kind: 'drop-responses' });
  const acted = new Promise<void>((resolve) => {
    proxy.once('request', () => {
      if (healed) return;
      timer = setInterval(() => {
        if (proxy.stats().bytesDropped === droppedBefore) return;
        clearInterval(timer);
        proxy.setMode({ kind: 'reset' });
        resolve();
      }, pollMs);
    });
  });
  return {
    acted,
    heal() {
      healed = true;
      clearInterval(timer);
      proxy.setMode({ kind: 'pass' });
    },
  };
}
