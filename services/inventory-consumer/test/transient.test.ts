import { describe, expect, it } from 'vitest';
import { isTransientDbError } from '../src/transient.ts';

// Pure classification: which handler errors go back to Kafka for a retry (transient)
// and which are dead-lettered. Errors built the way pg reports them (code = SQLSTATE).
describe('isTransientDbError', () => {
  const pgError = (code: string) => Object.assign(new Error(`sqlstate ${code}`), { code });

  it.each([
    ['08006', 'connection failure'],
    ['08001', 'cannot establish a connection'],
    ['08003', 'connection does not exist'],
    ['25006', 'read-only transaction (after a failover)'],
    ['40001', 'serialization failure'],
    ['40P01', 'deadlock'],
    ['53100', 'disk full'],
    ['53200', 'out of memory'],
    ['53300', 'too many connections'],
    ['55P03', 'lock not available'],
    ['57014', 'statement timeout / cancel'],
    ['57P01', 'admin shutdown'],
    ['57P02', 'crash shutdown'],
    ['57P03', 'cannot connect now (starting up)'],
    ['58030', 'I/O error'],
  ])('retries SQLSTATE %s (%s)', (code) => {
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

  it.each(['23505', '23503', '42P01', '42703', '22P02', '22001'])(
    'dead-letters SQLSTATE %s (the message is at fault)',
    (code) => {
      expect(isTransientDbError(pgError(code))).toBe(false);
    },
  );
});
