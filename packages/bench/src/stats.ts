/** Median and spread (min–max) of repeated samples. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  samples: number[];
}

export function summarize(samples: number[]): Summary {
  if (samples.length === 0) return { median: NaN, min: NaN, max: NaN, samples };
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, samples };
}

/** Nearest-rank percentile (p in 0–100) of unsorted values. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export const fmt = (n: number, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits }) : '–';

/** "median (min–max)" */
export const spread = (s: Summary, digits = 0) =>
  `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`;

/** A ratio as a percentage, or "n×" when it is above 2. */
export function ratio(a: number, b: number): string {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return '–';
  const r = a / b;
  return r >= 2 ? `${fmt(r, 1)}×` : `${fmt(r * 100, 1)}%`;
}

/** Runs `fn` for every round and every variant, alternating the variants in each round. */
export async function alternate<V>(
  rounds: number,
  variants: readonly V[],
  fn: (variant: V, round: number) => Promise<void>,
): Promise<void> {
  for (let round = 1; round <= rounds; round += 1) {
    // Rotate the order each round, so no variant always runs first (warm caches, fresh WAL).
    const offset = (round - 1) % variants.length;
    const order = [...variants.slice(offset), ...variants.slice(0, offset)];
    for (const variant of order) await fn(variant, round);
  }
}
