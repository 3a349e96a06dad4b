/**
 * The read position in an append-only table keyed by a BIGSERIAL id.
 *
 * Ids are handed out when a row is inserted, not when it commits: a transaction that
 * took id 41 may commit after the one that took 42 was already read. Reading "id >
 * last seen" alone would skip 41 forever. So the ids skipped below the watermark are
 * remembered as gaps and asked for again on every read until they show up or
 * `gapTtlMs` passes (a rolled-back insert leaves a gap that never fills).
 */
export class IdTail {
  private mark = 0n;
  private readonly gaps = new Map<bigint, number>();

  constructor(
    private readonly gapTtlMs = 30_000,
    private readonly maxGaps = 10_000,
  ) {}

  /** Rows with id <= watermark that are not gaps have been counted. */
  get watermark(): string {
    return this.mark.toString();
  }

  /** Ids below the watermark not seen yet. */
  get gapIds(): string[] {
    return [...this.gaps.keys()].map(String);
  }

  /** Starts over at `watermark` (a baseline was taken up to it) with no gaps. */
  reset(watermark: string | bigint): void {
    this.mark = BigInt(watermark);
    this.gaps.clear();
  }

  /**
   * Records what a read returned: the ids of the gap rows that appeared, and the ids
   * above the watermark in ascending order (all of them up to the largest returned).
   */
  advance(ids: readonly string[], now = Date.now()): void {
    let expected = this.mark + 1n;
    for (const text of ids) {
      const id = BigInt(text);
      if (id <= this.mark) {
        this.gaps.delete(id);
        continue;
      }
      // A jump wider than the gap budget (a bumped sequence) only keeps its top end.
      const from = id - expected > BigInt(this.maxGaps) ? id - BigInt(this.maxGaps) : expected;
      for (let missing = from; missing < id; missing += 1n) this.gaps.set(missing, now);
      expected = id + 1n;
      this.mark = id;
    }
    for (const [id, since] of this.gaps) {
      if (now - since > this.gapTtlMs) this.gaps.delete(id);
    }
    // A huge jump (rows deleted, a sequence bumped) would flood the set: keep the newest.
    if (this.gaps.size > this.maxGaps) {
      const sorted = [...this.gaps.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      for (const id of sorted.slice(0, this.gaps.size - this.maxGaps)) this.gaps.delete(id);
    }
  }
}
