import { startTelemetry } from '@outbox/lab/telemetry';

// Tracing first (off unless an OTLP endpoint is set: docs/tracing.md). Its loader hook
// instruments only the pg and express imported after it, hence the dynamic import.
await startTelemetry('publisher-worker', process.env);
await import('./service.ts');
