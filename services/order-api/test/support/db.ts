import { createTestDb as createSchema, type TestDb as BaseTestDb } from '@outbox/testkit';

export interface TestDb extends BaseTestDb {
  /** Row counts of the tables a request may write. */
  counts(): Promise<{ orders: number; outbox: number; idempotency_keys: number }>;
}

/** The testkit's per-test schema, stocked (1000 of each TEST_SKUS) for orders to reserve. */
export async function createTestDb(): Promise<TestDb> {
  const db = await createSchema({ stock: 1000 });
  return {
    ...db,
    async counts() {
      const { rows } = await db.pool.query<{
        orders: number;
        outbox: number;
        idempotency_keys: number;
      }>(
        `SELECT (SELECT count(*) FROM orders)::int AS orders,
                (SELECT count(*) FROM outbox)::int AS outbox,
                (SELECT count(*) FROM idempotency_keys)::int AS idempotency_keys`,
      );
      return rows[0] as { orders: number; outbox: number; idempotency_keys: number };
    },
  };
}
