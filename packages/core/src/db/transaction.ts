import type { Pool, PoolClient } from 'pg';

/**
 * Runs `fn` inside BEGIN … COMMIT on one client of `pool`: ROLLBACK when it throws,
 * the client released in every case. A client whose ROLLBACK failed is destroyed
 * rather than returned to the pool in an unknown state.
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
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      broken = rollbackError as Error;
    }
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
