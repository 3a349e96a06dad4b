import { z } from 'zod';

/**
 * The spans of an OTLP/HTTP JSON export (ExportTraceServiceRequest, the body that
 * @opentelemetry/exporter-trace-otlp-http posts to /v1/traces), flattened: what the
 * dashboard's receiver (the order journey) and the tests' receiver (testkit) read. The protobuf JSON mapping is followed: ids are hex (the OTLP
 * spec's exception to proto3's base64), 64-bit times are decimal strings, enums are
 * numbers; a number is accepted for a time too, as some exporters send one.
 */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  /** Undefined for a root span. */
  parentSpanId: string | undefined;
  name: string;
  kind: SpanKind;
  /** The resource's service.name. */
  service: string;
  /** Epoch milliseconds, fractional (nanosecond precision kept to the microsecond). */
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

/** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
export type SpanKind = 'unspecified' | 'internal' | 'server' | 'client' | 'producer' | 'consumer';
const KINDS: SpanKind[] = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

const hexId = (length: number) =>
  z
    .string()
    .regex(new RegExp(`^[0-9a-fA-F]{${length}}$`), `a ${length}-digit hex id`)
    .transform((s) => s.toLowerCase());
const nanos = z.union([z.string().regex(/^\d{1,20}$/), z.number().nonnegative()]);

const anyValue: z.ZodType<unknown> = z.lazy(() =>
  z
    .object({
      stringValue: z.string().optional(),
      boolValue: z.boolean().optional(),
      intValue: z.union([z.string(), z.number()]).optional(),
      doubleValue: z.number().optional(),
      arrayValue: z.object({ values: z.array(anyValue).optional() }).optional(),
    })
    .loose(),
);
const keyValue = z.object({ key: z.string(), value: anyValue.optional() });

const spanSchema = z.object({
  traceId: hexId(32),
  spanId: hexId(16),
  parentSpanId: z.union([hexId(16), z.literal('')]).optional(),
  name: z.string(),
  kind: z.number().int().min(0).max(5).optional(),
  startTimeUnixNano: nanos,
  endTimeUnixNano: nanos,
  attributes: z.array(keyValue).optional(),
  status: z
    .object({ code: z.number().int().min(0).max(2).optional() })
    .loose()
    .optional(),
});

export const exportTraceRequestSchema = z.object({
  resourceSpans: z
    .array(
      z.object({
        resource: z
          .object({ attributes: z.array(keyValue).optional() })
          .loose()
          .optional(),
        scopeSpans: z.array(z.object({ spans: z.array(spanSchema).optional() }).loose()).optional(),
      }),
    )
    .optional(),
});
export type ExportTraceRequest = z.infer<typeof exportTraceRequestSchema>;

/** Epoch ms from nanoseconds given as decimal text (exact to the microsecond) or a number. */
function toMs(value: string | number): number {
  if (typeof value === 'number') return value / 1e6;
  const micros = value.length > 3 ? Number(value.slice(0, -3)) : 0;
  return micros / 1e3;
}

function scalar(value: unknown): string | number | boolean | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.stringValue === 'string') return v.stringValue;
  if (typeof v.boolValue === 'boolean') return v.boolValue;
  if (typeof v.doubleValue === 'number') return v.doubleValue;
  if (typeof v.intValue === 'number') return v.intValue;
  if (typeof v.intValue === 'string') return Number(v.intValue);
  return undefined;
}

function attributesOf(list: z.infer<typeof keyValue>[] | undefined) {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    const s = scalar(value);
    if (s !== undefined) out[key] = s;
  }
  return out;
}

/** Every span of a parsed export, with its service's name. */
export function spansOf(request: ExportTraceRequest): SpanRecord[] {
  const spans: SpanRecord[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const service = attributesOf(rs.resource?.attributes)['service.name'];
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ? s.parentSpanId : undefined,
          name: s.name,
          kind: KINDS[s.kind ?? 0] ?? 'unspecified',
          service: typeof service === 'string' ? service : 'unknown_service',
          startMs: toMs(s.startTimeUnixNano),
          endMs: toMs(s.endTimeUnixNano),
          attributes: attributesOf(s.attributes),
          statusCode: s.status?.code ?? 0,
        });
      }
    }
  }
  return spans;
}

/** The trace id of a W3C traceparent (`00-<trace id>-<span id>-<flags>`), or undefined. */
export function traceIdOf(traceparent: unknown): string | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const m = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent.trim());
  return m?.[1] && !/^0+$/.test(m[1]) ? m[1] : undefined;
}
