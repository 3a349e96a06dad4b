import { describe, expect, it } from 'vitest';
import { sentence } from '@outbox/dashboard-api/teaching';

describe('sentence (the lesson banner runs the table cell on into its fix)', () => {
  it('ends a phrase with a full stop and leaves a finished sentence alone', () => {
    expect(sentence('the warehouse never hears of it')).toBe('the warehouse never hears of it.');
    expect(sentence('Consistent.')).toBe('Consistent.');
    expect(sentence('Why?')).toBe('Why?');
  });
});
