import type { Pool } from 'pg';

/** The demo's catalogue: a few SKUs with plenty of stock. */
export const DEMO_SKUS = ['sku-1', 'sku-2', 'sku-3', 'sku-4', 'sku-5'];

/** Inserts the demo inventory once; existing stock is left as it is. */
export async function seedInventory(pool: Pool, available = 1_000_000): Promise<void> {
  await pool.query(
    `INSERT INTO inventory (sku, available) SELECT unnest($1::text[]), $2 ON CONFLICT (sku) DO NOTHING`,
    [DEMO_SKUS, available],
  );
}
