import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDashboard } from './support/browser.ts';
import { tileValue, within } from './support/dashboard.ts';
import { trackPages } from './support/spec.ts';
import { resetSystem, systemPool } from './support/system.ts';

describe('outbox browser', () => {
  const track = trackPages();
  const pool = systemPool();
  beforeAll(resetSystem);
  afterAll(() => pool.end());

  it('requeues a dead-lettered row once its cause is fixed, and the order gets its event', async () => {
    // A writer bug: the order and its event commit together, but the event says 'Order'
    // where the relay routes 'order'. The relay cannot publish it and, after
    // MAX_ATTEMPTS (2 here), dead-letters the row: it waits for a human.
    const orderId = randomUUID();
    const client = await pool.connect();
    let outboxId: string;
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO orders (id, user_id, sku, quantity, status, seq, mode)
         VALUES ($1, 7, 'sku-1', 1, 'created', 1, 'outbox')`,
        [orderId],
      );
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO outbox (aggregate_type, aggregate_id, event_type, event_version, payload)
         VALUES ('Order', $1, 'OrderCreated', 2, $2::jsonb) RETURNING id::text`,
        [
          orderId,
          JSON.stringify({ orderId, userId: 7, sku: 'sku-1', quantity: 1, seq: 1, source: 'api' }),
        ],
      );
      outboxId = rows[0]?.id ?? '';
      await client.query('COMMIT');
    } finally {
      client.release();
    }

    const { page, screenshot } = track(await openDashboard());
    const browser = page.locator('#outbox');
    await browser.scrollIntoViewIfNeeded();
    await browser.getByRole('button', { name: 'Dead-lettered' }).click();
    const row = page.getByTestId(`outbox-row-${outboxId}`);
    await expect.poll(() => row.count(), within).toBe(1);
    await expect(row.innerText()).resolves.toContain('dead');
    // A dead-lettered OrderCreated (under a type the relay does not route) is an order
    // whose event was never published, until someone acts.
    await expect.poll(() => tileValue(page, 'neverPublished'), within).toBe(1);
    await screenshot('outbox-dead-lettered');

    // Fix the cause (the aggregate type), then requeue from the browser.
    await pool.query(`UPDATE outbox SET aggregate_type = 'order' WHERE id = $1`, [outboxId]);
    await row.getByRole('button', { name: `Requeue outbox row ${outboxId}` }).click();
    await expect
      .poll(() => page.getByTestId('requeue-notice').innerText(), within)
      .toContain(`Row ${outboxId} requeued`);

    await browser.getByRole('button', { name: 'Sent' }).click();
    await expect.poll(() => row.count(), within).toBe(1);
    await expect(row.innerText()).resolves.toContain('sent');
    // With where the broker acknowledged it, as the relay recorded it.
    const at = await pool.query<{ at: string }>(
      `SELECT 'p' || kafka_partition || '@' || kafka_offset AS at FROM outbox WHERE id = $1`,
      [outboxId],
    );
    expect(at.rows[0]?.at).toMatch(/^p\d+@\d+$/);
    await expect(row.innerText()).resolves.toContain(at.rows[0]!.at);
    await expect.poll(() => tileValue(page, 'neverPublished'), within).toBe(0);

    // The order's journey, from the row's link: every step done, reserved once.
    await row.getByTitle(/Show the journey/).click();
    const journey = page.getByTestId('journey');
    await expect.poll(() => journey.locator('.step-done').count(), within).toBe(5);
    const { rows } = await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM reservations WHERE order_id = $1',
      [orderId],
    );
    expect(rows[0]?.n).toBe(1);
    await screenshot('outbox-requeued');
  });
});
