/** Resolves when every URL answers `GET /healthz` with 2xx; rejects after `timeoutMs`. */
export async function waitHealthy(baseUrls: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const pending = new Set(baseUrls);
  while (pending.size > 0) {
    for (const base of [...pending]) {
      const ok = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) })
        .then((r) => r.ok)
        .catch(() => false);
      if (ok) pending.delete(base);
    }
    if (pending.size === 0) return;
    if (Date.now() > deadline)
      throw new Error(`not healthy after ${timeoutMs} ms: ${[...pending].join(', ')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
