import { describe, expect, it } from 'vitest';
import { keepsPageOf } from '../src/api/outbox-filter.ts';

describe('keepsPageOf', () => {
  it('keeps the page on screen while paging through one filter', () => {
    expect(keepsPageOf({ status: 'dead' }, { status: 'dead', cursor: '40' })).toBe(true);
    expect(keepsPageOf({ status: 'dead', cursor: '40' }, { status: 'dead' })).toBe(true);
  });

  it("never shows another tab's rows under this tab while its page loads", () => {
    expect(keepsPageOf({}, { status: 'dead' })).toBe(false);
    expect(keepsPageOf({ status: 'dead' }, { status: 'sent' })).toBe(false);
    expect(keepsPageOf({ aggregateId: 'a' }, { aggregateId: 'b' })).toBe(false);
    expect(keepsPageOf(undefined, {})).toBe(false);
  });
});
