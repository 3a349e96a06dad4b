import { describe, expect, it } from 'vitest';
import { isTransientDbError } from '../src/transient.ts';

// Pure classification: which handler errors go back to Kafka for a retry (transient)
// and which are dead-lettered. Errors built the way pg reports them (code = SQLSTATE).
describe('isTransientDbError', () => {
  const pgError = (code: string) => Object.assign(new Error(`sqlstate ${code}`), { code });

  it.each(['08006', '08001', '40001', '40P01', '57P01'])('retries SQLSTATE %s', (code) => {
    expect(isTransientDbError(pgError(code))).toBe(true);
  });

  it('retries a refused or lost connection', () => {
    expect(isTransientDbError(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }))).toBe(
      true,
    );
    expect(isTransientDbError(new Error('Connection terminated unexpectedly'))).toBe(true);
    // pg's query_timeout: the link went silent (a half-open connection).
    expect(isTransientDbError(new Error('Query read timeout'))).toBe(true);
    expect(isTransientDbError(new Error('wrapped', { cause: pgError('40001') }))).toBe(true);
  });

  it.each(['23505', '42P01', '22P02'])(
    'dead-letters SQLSTATE %s (the message is at fault)',
    (code) => {
      expect(isTransientDbError(pgError(code))).toBe(false);
    },
  );
});
