/** SQLSTATEs worth retrying as they are: the same message may well succeed next time. */
const TRANSIENT_SQLSTATES = new Set(['40001', '40P01', '57P01', '57P02', '57P03', '53300']);
/** Node socket errors of a PostgreSQL connection that went away. */
const TRANSIENT_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
]);

/**
 * Whether a handler error is the database's momentary trouble (connection lost or
 * refused, serialization failure, deadlock, shutdown) rather than the message's fault.
 * A transient error is thrown back to kafkajs, which retries the message; any other is
 * dead-lettered, because retrying it would fail the same way forever.
 */
export function isTransientDbError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth += 1) {
    const err = e as { code?: unknown; message?: unknown; cause?: unknown };
    const code = typeof err.code === 'string' ? err.code : undefined;
    if (code && (code.startsWith('08') || TRANSIENT_SQLSTATES.has(code))) return true;
    if (code && TRANSIENT_NODE_CODES.has(code)) return true;
    // pg and pg-pool report a lost or unobtainable connection with plain Errors; a
    // call into a silent link ends in pg's client-side query timeout (core's pgConfig).
    const message = typeof err.message === 'string' ? err.message : '';
    if (
      /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/i.test(
        message,
      )
    )
      return true;
    e = err.cause;
  }
  return false;
}
