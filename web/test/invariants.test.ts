import { describe, expect, it } from 'vitest';
import { invariantTiles } from '../src/live/invariants.ts';
import { statsMessage } from './stats-fixture.ts';

describe('invariantTiles', () => {
  it('turns a broken invariant red and a caught duplicate green', () => {
    const inv = {
      ...statsMessage().invariants,
      doubleProcessed: 2,
      duplicatesCaught: 5,
      outboxDeadLettered: 1,
      consumerDeadLettered: 2,
    };
    const byKey = Object.fromEntries(invariantTiles(inv).map((t) => [t.key, t]));
    expect(byKey.doubleProcessed).toMatchObject({ value: 2, severity: 'broken' });
    expect(byKey.duplicatesCaught).toMatchObject({ value: 5, severity: 'caught' });
    expect(byKey.neverPublished?.severity).toBe('ok');
    expect(byKey.deadLettered).toMatchObject({ value: 3, severity: 'warn' });
  });

  it('tells orders without events apart: lost in red, waiting on the topic in amber', () => {
    const base = statsMessage().invariants;
    const byKey = (inv: typeof base) =>
      Object.fromEntries(invariantTiles(inv).map((t) => [t.key, t]));
    const split = byKey({
      ...base,
      ordersWithoutEvents: 7,
      neverPublished: 2,
      publishedNotConsumed: 5,
    });
    expect(split.neverPublished).toMatchObject({ value: 2, severity: 'broken' });
    expect(split.publishedNotConsumed).toMatchObject({ value: 5, severity: 'warn' });
    // A server without the split: every order without events counts as lost, as before.
    const old = byKey({ ...base, ordersWithoutEvents: 3 });
    expect(old.neverPublished).toMatchObject({ value: 3, severity: 'broken' });
    expect(old.publishedNotConsumed).toMatchObject({ value: 0, severity: 'ok' });
  });
});
