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
    client.release(broken);
  }
}
