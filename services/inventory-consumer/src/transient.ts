/**
 * SQLSTATEs that say "the database cannot do it right now", not "this message is bad":
 * the same delivery may well succeed on a later attempt, so it is retried, never
 * dead-lettered (dead-lettering commits the offset, skips the effect for good, and lets
 * the order's later events be applied first).
 */
export const SqlState = {
  /** Class 08, connection exception: any code starting with it (08000, 08003, 08006…). */
  connectionExceptionClass: '08',
  /** 25006: read-only transaction, e.g. writing to a standby just after a failover. */
  readOnlySqlTransaction: '25006',
  /** 40001: serialization failure. */
  serializationFailure: '40001',
  /** 40P01: deadlock detected (PostgreSQL aborted this transaction, not the other). */
  deadlockDetected: '40P01',
  /** 53000: insufficient resources (class 53), and its named members below. */
  insufficientResources: '53000',
  /** 53100: disk full. */
  diskFull: '53100',
  /** 53200: out of memory. */
  outOfMemory: '53200',
  /** 53300: too many connections. */
  tooManyConnections: '53300',
  /** 55P03: lock not available (lock_timeout, NOWAIT). */
  lockNotAvailable: '55P03',
  /**
   * 57014: query canceled (statement_timeout, pg_cancel_backend). The consumer's
   * statements are a few index lookups: a timeout is contention, not the message.
   */
  queryCanceled: '57014',
  /** 57P01: admin shutdown (the server is stopping, or pg_terminate_backend). */
  adminShutdown: '57P01',
  /** 57P02: crash shutdown (another backend crashed). */
  crashShutdown: '57P02',
  /** 57P03: cannot connect now (the server is starting up or in recovery). */
  cannotConnectNow: '57P03',
  /** 57P05: idle session timeout. */
  idleSessionTimeout: '57P05',
  /** 58000: system error (class 58: an error outside PostgreSQL, e.g. of the OS). */
  systemError: '58000',
  /** 58030: I/O error. */
  ioError: '58030',
  /** 25P03: idle-in-transaction session timeout. */
  idleInTransactionSessionTimeout: '25P03',
} as const;

const TRANSIENT_SQLSTATES: ReadonlySet<string> = new Set([
  SqlState.readOnlySqlTransaction,
  SqlState.serializationFailure,
  SqlState.deadlockDetected,
  SqlState.insufficientResources,
  SqlState.diskFull,
  SqlState.outOfMemory,
  SqlState.tooManyConnections,
  SqlState.lockNotAvailable,
  SqlState.queryCanceled,
  SqlState.adminShutdown,
  SqlState.crashShutdown,
  SqlState.cannotConnectNow,
  SqlState.idleSessionTimeout,
  SqlState.systemError,
  SqlState.ioError,
  SqlState.idleInTransactionSessionTimeout,
]);

/** Node socket errors of a PostgreSQL connection that went away or cannot be made. */
const TRANSIENT_NODE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * Whether a handler error is the database's momentary trouble (connection lost or
 * refused, timeout or cancel, lock not available, serialization failure, deadlock,
 * shutdown or start-up, read-only after a failover, resources or I/O) rather than the
 * message's fault. A transient error is thrown back to kafkajs, which retries the
 * message; any other is dead-lettered, because retrying it would fail the same way
 * forever (a constraint, a type, a missing table: classes 22, 23, 42…).
 */
export function isTransientDbError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth += 1) {
    const err = e as { code?: unknown; message?: unknown; cause?: unknown };
    const code = typeof err.code === 'string' ? err.code : undefined;
    if (
      code &&
      (code.startsWith(SqlState.connectionExceptionClass) || TRANSIENT_SQLSTATES.has(code))
    )
      return true;
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
