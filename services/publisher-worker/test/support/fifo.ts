import type { Received } from '@outbox/testkit';

/**
 * Per-aggregate order as a consumer would see it: for each key, its messages in
 * partition offset order (one key → one partition), first delivery of each event only.
 * Returns the number of places where a seq is not above the previous one.
 */
export function fifoViolations(received: Received[]): number {
  const byKey = new Map<string, Received[]>();
  for (const m of received) byKey.set(m.key, [...(byKey.get(m.key) ?? []), m]);
  let violations = 0;
  for (const messages of byKey.values()) {
    messages.sort((a, b) => Number(BigInt(a.offset) - BigInt(b.offset)));
    const seen = new Set<string>();
    let last = 0;
    for (const m of messages) {
      const id = m.headers.event_id ?? '';
      if (seen.has(id)) continue;
      seen.add(id);
      const { seq } = JSON.parse(m.value) as { seq: number };
      if (seq <= last) violations += 1;
      last = Math.max(last, seq);
    }
  }
  return violations;
}
