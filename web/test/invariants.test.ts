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
    expect(byKey.ordersWithoutEvents?.severity).toBe('ok');
    expect(byKey.deadLettered).toMatchObject({ value: 3, severity: 'warn' });
  });
});
