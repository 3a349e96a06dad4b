import type { FeedEvent } from '../contract.ts';

/** The last `size` feed lines, for GET /api/events and a client that just connected. */
export class FeedBuffer {
  private lines: FeedEvent[] = [];

  constructor(readonly size = 200) {}

  push(events: readonly FeedEvent[]): void {
    if (events.length === 0) return;
    this.lines = [...this.lines, ...events].slice(-this.size);
  }

  last(n = this.size): FeedEvent[] {
    return this.lines.slice(-n);
  }

  clear(): void {
    this.lines = [];
  }
}
