/**
 * The dashboard's teaching text, in one place: the seed's four dual-write scenarios,
 * the scenario table (the seed's rows and the outbox's own), what each failure point
 * does and what to watch. dashboard-api serves it (GET /api/state); the web app imports
 * it (`@outbox/dashboard-api/teaching`: no import but the contract's types, so it
 * bundles in the browser).
 */
export { SCENARIOS } from './seed-scenarios.ts';
export { FAILURE_POINTS } from './failure-points.ts';
export * from './scenario-table.ts';
export * from './failure-extras.ts';
export * from './cdc-comparison.ts';
