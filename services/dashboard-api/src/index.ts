/**
 * @outbox/dashboard-api: the dashboard's server (socket.io stats stream + REST).
 * The wire contract is `./contract.ts`, also exported as `@outbox/dashboard-api/contract`.
 */
export * from './contract.ts';
export { startDashboard, type Dashboard } from './server.ts';
export { loadConfig, configSchema, defaultOrigins, type DashboardConfig } from './config.ts';
export { StatsEngine, type StatsEngineOptions } from './stats/engine.ts';
