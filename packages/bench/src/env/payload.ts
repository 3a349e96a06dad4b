/**
 * Realistic event payloads (~300–500 bytes of JSON, the figure): an order with
 * 1 to 3 lines, a customer and a shipping address. The same shape is built in SQL (for
 * bulk backlogs) and in JS (for writers), so every variant relays the same bytes.
 */

/** Aggregate (order) id of event `i`: two events per order, as Created then Paid would be. */
export const aggregateIdSql = (i: string) => `md5(((${i}) / 2)::text)::uuid::text`;

/** Event type of event `i`, matching aggregateIdSql's two events per order. */
export const eventTypeSql = (i: string) =>
  `CASE WHEN (${i}) % 2 = 0 THEN 'OrderCreated' ELSE 'OrderPaid' END`;

const lineSql = (i: string, k: number) =>
  `jsonb_build_object('sku', 'sku-' || lpad((((${i}) + ${k}) % 500)::text, 4, '0'), 'quantity', ${k + 1}, 'unitPriceCents', ${999 + k * 500})`;

/** JSONB payload of event `i`, ~300–500 bytes as text. */
export function payloadSql(i: string): string {
  return `jsonb_build_object(
    'orderId', ${aggregateIdSql(i)},
    'userId', 1 + (${i}) % 100000,
    'sku', 'sku-' || lpad(((${i}) % 500)::text, 4, '0'),
    'quantity', 1 + (${i}) % 5,
    'seq', 1 + (${i}) % 2,
    'source', 'bench',
    'customer', jsonb_build_object('email', 'user' || ((${i}) % 100000) || '@example.com', 'name', 'Customer ' || ((${i}) % 100000)),
    'shippingAddress', jsonb_build_object('street', ((${i}) % 300) || ' Prinsengracht', 'city', 'Amsterdam', 'postcode', '1016 GV', 'country', 'NL'),
    'lines', CASE (${i}) % 3
      WHEN 0 THEN jsonb_build_array(${lineSql(i, 0)})
      WHEN 1 THEN jsonb_build_array(${lineSql(i, 0)}, ${lineSql(i, 1)})
      ELSE jsonb_build_array(${lineSql(i, 0)}, ${lineSql(i, 1)}, ${lineSql(i, 2)}) END,
    'currency', 'EUR',
    'placedAt', now())`;
}

/** Kafka-bound headers of an event: a correlation id and a W3C trace context. */
export const headersSql = (i: string) =>
  `jsonb_build_object('correlationId', md5((${i})::text)::uuid::text, 'traceparent', '00-' || md5((${i})::text) || '-' || left(md5(((${i}) + 1)::text), 16) || '-01')`;

/** The same payload as payloadSql, built in JS. */
export function orderPayload(i: number, orderId: string): Record<string, unknown> {
  const line = (k: number) => ({
    sku: `sku-${String((i + k) % 500).padStart(4, '0')}`,
    quantity: k + 1,
    unitPriceCents: 999 + k * 500,
  });
  return {
    orderId,
    userId: 1 + (i % 100_000),
    sku: `sku-${String(i % 500).padStart(4, '0')}`,
    quantity: 1 + (i % 5),
    seq: 1,
    source: 'bench',
    customer: { email: `user${i % 100_000}@example.com`, name: `Customer ${i % 100_000}` },
    shippingAddress: {
      street: `${i % 300} Prinsengracht`,
      city: 'Amsterdam',
      postcode: '1016 GV',
      country: 'NL',
    },
    lines: Array.from({ length: 1 + (i % 3) }, (_, k) => line(k)),
    currency: 'EUR',
    placedAt: new Date().toISOString(),
  };
}
