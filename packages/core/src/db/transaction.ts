import type { Pool, PoolClient } from 'pg';

/**
 * pg's client-side query timeout (`query_timeout`) rejects with a plain Error of this
 * message and leaves the query in flight: the connection no longer answers in turn.
 */
export const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/** Whether `error` is pg's client-side query timeout (see QUERY_TIMEOUT_MESSAGE). */
export function isQueryTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === QUERY_TIMEOUT_MESSAGE;
}

/**
 * Runs `fn` inside BEGIN … COMMIT on one client of `pool`: ROLLBACK when it throws,
 * the client released in every case. A client that lost its connection, timed out a
 * query or failed its ROLLBACK is destroyed rather than returned to the pool in an
 * unknown state; ending its session rolls the transaction back on the server.
 */
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A checked-out client that loses its connection emits 'error'; without a listener
  // Node would crash the process. Record it instead: the query in flight rejects on
  // its own, and the client is destroyed rather than returned to the pool.
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A query that timed out is still in flight (a silent link): a ROLLBACK would queue
    // behind it and wait out another timeout. Never COMMIT, never reuse: destroying the
    // client ends the session, and the server rolls back whatever it still holds.
    if (!broken && isQueryTimeout(error)) broken = error as Error;
    if (!broken) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        broken = rollbackError as Error;
      }
    }
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
