/**
 * @outbox/dashboard-api: the dashboard's server. The wire contract lives in
 * `./contract.ts` (also exported as `@outbox/dashboard-api/contract`).
 */
export * from './contract.ts';
