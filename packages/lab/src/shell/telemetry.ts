import { register } from 'node:module';
import type { Instrumentation } from '@opentelemetry/instrumentation';

/**
 * OpenTelemetry traces for a service, with the standard SDK (NodeSDK) and its standard
 * environment: on only when an OTLP endpoint is given (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and OTEL_SDK_DISABLED is not true. Off, nothing
 * of the SDK is even imported, and every span of core and the services is the API's
 * no-op. The SDK reads the rest of the OTEL_* variables itself (service name, resource
 * attributes, headers, batch delays, sampler): that is the standard contract, so they
 * are not repeated in the services' configuration. docs/tracing.md lists the spans.
 *
 * Must run before the service's other modules are imported (see the services'
 * main.ts): pg and express are instrumented through a loader hook, which only sees the
 * modules loaded after it is registered.
 */
export interface Telemetry {
  readonly enabled: boolean;
  /** Exports the spans ended so far (before a deliberate crash, say). */
  flush(): Promise<void>;
  /** Exports what is left and stops; safe to call twice. */
  shutdown(): Promise<void>;
}

const OFF: Telemetry = {
  enabled: false,
  flush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

let current: Telemetry = OFF;

/** Whether the environment asks for traces (an OTLP endpoint, and the SDK not disabled). */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
  return Boolean(endpoint?.trim()) && !disabled;
}

// Requests that would open a trace each and tell nothing about an order: the
// supervisor's and Prometheus' probes.
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Starts tracing if the environment asks for it (else returns the no-op telemetry).
 * `serviceName` is the default service.name; OTEL_SERVICE_NAME or a service.name in
 * OTEL_RESOURCE_ATTRIBUTES wins over it, as the standard says.
 */
export async function startTelemetry(
  serviceName: string,
  env: NodeJS.ProcessEnv,
): Promise<Telemetry> {
  if (!tracingWanted(env) || current.enabled) return current;
  // ESM: pg and express are imported, not required, so the instrumentations patch them
  // through import-in-the-middle's loader hook (module.register, in the loader thread).
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, {
    data: { include: ['pg', 'pg-pool', 'express'] },
  });
  const [
    { NodeSDK },
    { OTLPTraceExporter },
    { HttpInstrumentation },
    { ExpressInstrumentation },
    { PgInstrumentation },
    { trace },
  ] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-express'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/api'),
  ]);
  const named =
    Boolean(env.OTEL_SERVICE_NAME?.trim()) ||
    /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const instrumentations: Instrumentation[] = [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => PROBES.has((req.url ?? '').split('?')[0] ?? ''),
      // Outgoing HTTP (the exporter's own requests aside) is not part of an order's way.
      requireParentforOutgoingSpans: true,
    }),
    new ExpressInstrumentation(),
    // Only queries made inside a traced operation: the relay's polls, LISTEN and the
    // failure points' reads would otherwise open a trace each, several per second.
    new PgInstrumentation({ requireParentSpan: true }),
  ];
  const sdk = new NodeSDK({
    ...(named ? {} : { serviceName }),
    // OTLP/HTTP with JSON bodies, to OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT.
    traceExporter: new OTLPTraceExporter(),
    instrumentations,
    // Metrics stay with Prometheus (/metrics) and logs with pino (stdout).
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  let stopped: Promise<void> | undefined;
  current = {
    enabled: true,
    async flush() {
      const provider = trace.getTracerProvider() as { getDelegate?: () => unknown };
      const delegate = provider.getDelegate?.() as { forceFlush?: () => Promise<void> };
      await delegate?.forceFlush?.();
    },
    shutdown() {
      stopped ??= sdk.shutdown().catch(() => undefined);
      return stopped;
    },
  };
  return current;
}

/** The telemetry started in this process (the no-op one if none). */
export function telemetry(): Telemetry {
  return current;
}
