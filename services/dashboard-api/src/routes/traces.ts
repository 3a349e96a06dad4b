import { exportTraceRequestSchema, jsonBody, spansOf } from '@outbox/lab';
import { Router, type RequestHandler } from 'express';
import { HttpError, parseOr400 } from '../http/errors.ts';
import { requireControl } from '../security/control.ts';
import type { SpanStore } from '../traces/span-store.ts';

/** The OTLP/HTTP path of traces: OTEL_EXPORTER_OTLP_ENDPOINT=<dashboard> posts here. */
export const OTLP_TRACES_PATH = '/v1/traces';

/**
 * An OTLP/HTTP receiver of traces in JSON (what @opentelemetry/exporter-trace-otlp-http
 * sends), so that the order journey can show the legs of a trace without a tracing
 * backend. Spans feed what the dashboard shows, so with a CONTROL_TOKEN the exporter
 * must send it (OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer <token>).
 */
export function tracesRouter(deps: { spans: SpanStore; token: string | undefined }): Router {
  const router = Router();
  // OTLP's other encoding: say how to switch rather than a bare 415.
  const notProtobuf: RequestHandler = (req, _res, next) => {
    next(
      req.is('application/x-protobuf')
        ? new HttpError(
            415,
            'this receiver takes OTLP/HTTP JSON only: set OTEL_EXPORTER_OTLP_PROTOCOL=http/json (the default of @opentelemetry/exporter-trace-otlp-http)',
          )
        : undefined,
    );
  };
  router.post(
    OTLP_TRACES_PATH,
    requireControl(deps.token),
    notProtobuf,
    // A batch of the SDK's span processor is at most 512 spans: well under this.
    ...jsonBody({
      limit: '4mb',
      httpError: (status, message, issues) =>
        new HttpError(
          status,
          message,
          issues?.map(({ path, message }) => ({ path, message })),
        ),
    }),
    (req, res) => {
      const request = parseOr400(exportTraceRequestSchema, req.body, 'OTLP trace export');
      deps.spans.add(spansOf(request));
      // ExportTraceServiceResponse: everything accepted.
      res.json({ partialSuccess: {} });
    },
  );
  return router;
}
