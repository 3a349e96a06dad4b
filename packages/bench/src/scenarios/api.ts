import autocannon from 'autocannon';
import type { BenchContext, ScenarioResult } from '../env/context.ts';
import { cpuSnapshot, cpuUse } from '../env/cpu.ts';
import { createSchema, settle, type BenchSchema } from '../env/db.ts';
import { deleteTopics, kafkaClient } from '../env/kafka.ts';
import { startOtlpSink, type OtlpSink } from '../env/otlp-sink.ts';
import { startService, type ServiceProcess } from '../env/service.ts';
import { startWorker, type Worker } from '../env/worker.ts';
import type { PlainServerSpec } from '../baseline/plain-server.ts';
import { markdownTable } from '../report/table.ts';
import { alternate, fmt, ratio, spread, summarize, type Summary } from '../stats.ts';

/**
 * Scenario 5, API throughput: autocannon on `POST /orders`, alternating, 20 s each:
 *   plain  — the baseline server (src/baseline): same validation, a plain INSERT;
 *   outbox — the real order-api, outbox mode: order + event in one statement (its
 *            default WRITE_PATH, core's appendWith), one round trip;
 *   outbox-transaction — the same order-api with WRITE_PATH=transaction: BEGIN,
 *            INSERT, INSERT, COMMIT (core's withTransaction + append), four round trips;
 *   naive  — the real order-api, naive mode (COMMIT, then produce to Kafka in the request);
 *   outbox-traced — outbox mode with OpenTelemetry on (OTEL_EXPORTER_OTLP_ENDPOINT set:
 *            http, express and pg instrumentations, core's outbox.append span, every
 *            span exported over OTLP/HTTP JSON to a local sink that drops them).
 * No relay runs: this is the request path's cost. order-api is started as its tests
 * start it; the mode is chosen per request in the body.
 */
type ApiVariant =
  'plain' | 'outbox' | 'outbox-transaction' | 'naive' | 'outbox-traced' | 'one-statement';
// 'one-statement' is for analysis only (--variant one-statement): see the baseline server.
const DEFAULT_VARIANTS: ApiVariant[] = [
  'plain',
  'outbox',
  'outbox-transaction',
  'naive',
  'outbox-traced',
];
const LABELS: Record<ApiVariant, string> = {
  plain: 'plain insert, no outbox (baseline server)',
  outbox: 'order-api, outbox mode, one statement (WRITE_PATH=statement, the default)',
  'outbox-transaction': 'order-api, outbox mode, BEGIN … COMMIT (WRITE_PATH=transaction)',
  naive: 'order-api, naive mode (Kafka in the request)',
  'outbox-traced': 'order-api, outbox mode, one statement, traced (OpenTelemetry, OTLP/HTTP)',
  'one-statement': 'baseline server: order + outbox row in one statement (analysis)',
};
const CONNECTIONS = 32;
const SKUS = Array.from({ length: 50 }, (_, i) => `sku-${String(i).padStart(4, '0')}`);

interface ApiRun {
  round: number;
  requestsPerSecond: number;
  p99Ms: number;
  p50Ms: number;
  ok: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  /** CPU during the run, % of one core: machine, postgres, the server, autocannon. */
  cpu: Record<string, number>;
}

export async function benchApi(ctx: BenchContext): Promise<ScenarioResult> {
  const seconds = ctx.quick ? 2 : 20;
  const prefix = 'bench.api.';
  const kafka = kafkaClient(ctx.kafkaBrokers, 'bench-api');
  let plainSchema: BenchSchema | undefined;
  let serviceSchema: BenchSchema | undefined;
  let plain: Worker | undefined;
  let service: ServiceProcess | undefined;
  let serviceTx: ServiceProcess | undefined;
  let serviceTraced: ServiceProcess | undefined;
  let sink: OtlpSink | undefined;
  const runs: Record<ApiVariant, ApiRun[]> = {
    plain: [],
    outbox: [],
    'outbox-transaction': [],
    naive: [],
    'outbox-traced': [],
    'one-statement': [],
  };
  const VARIANTS: ApiVariant[] = [
    ...DEFAULT_VARIANTS,
    ...(ctx.variants.includes('one-statement') ? (['one-statement'] as const) : []),
  ];
  try {
    plainSchema = await createSchema(ctx.databaseUrl, 'bench_api_plain');
    serviceSchema = await createSchema(ctx.databaseUrl, 'bench_api_service');
    for (const s of [plainSchema, serviceSchema]) {
      await s.pool.query(
        'INSERT INTO inventory (sku, available) SELECT unnest($1::text[]), 1000000000',
        [SKUS],
      );
    }
    plain = await startWorker('baseline/plain-server.ts', {
      databaseUrl: ctx.databaseUrl,
      schema: plainSchema.name,
    } satisfies PlainServerSpec);
    const plainUrl = `http://127.0.0.1:${await plain.request<number>({ type: 'port' })}`;
    const profDir = process.env.BENCH_CPU_PROF_DIR;
    const serviceEnv = {
      DATABASE_URL: ctx.databaseUrl,
      DATABASE_SCHEMA: serviceSchema.name,
      KAFKA_BROKERS: ctx.kafkaBrokers.join(','),
      TOPIC_PREFIX: prefix,
    };
    service = await startService(
      'order-api',
      { ...serviceEnv, WRITE_PATH: 'statement' },
      profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
    );
    serviceTx = await startService('order-api', { ...serviceEnv, WRITE_PATH: 'transaction' });
    if (VARIANTS.includes('outbox-traced')) {
      sink = await startOtlpSink();
      serviceTraced = await startService('order-api', {
        ...serviceEnv,
        WRITE_PATH: 'statement',
        OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      });
    }
    const urls: Record<ApiVariant, string> = {
      plain: `${plainUrl}/orders`,
      outbox: `${service.url}/orders`,
      'outbox-transaction': `${serviceTx.url}/orders`,
      naive: `${service.url}/orders`,
      'outbox-traced': `${serviceTraced?.url ?? ''}/orders`,
      'one-statement': `${plainUrl}/orders-one-statement`,
    };
    // Warm-up (JIT, pool connections, Kafka metadata): not recorded.
    for (const v of VARIANTS) await load(urls[v], v, ctx.quick ? 0.5 : 3);

    await alternate(ctx.rounds, VARIANTS, async (variant, round) => {
      const schema =
        variant === 'plain' || variant === 'one-statement' ? plainSchema! : serviceSchema!;
      await schema.pool.query('TRUNCATE orders, outbox, idempotency_keys');
      await settle(schema.pool, ctx.quick, 'orders', 'outbox');
      const server =
        variant === 'outbox-transaction'
          ? serviceTx!
          : variant === 'outbox-traced'
            ? serviceTraced!
            : variant === 'outbox' || variant === 'naive'
              ? service!
              : plain!;
      const groups = {
        server: [server.child.pid!],
        autocannon: [process.pid],
        kafka: ctx.kafkaPid ? [ctx.kafkaPid] : [],
      };
      const cpu0 = cpuSnapshot(groups);
      const r = await load(urls[variant], variant, seconds);
      const cpu = cpuUse(cpu0, cpuSnapshot(groups));
      runs[variant].push({ round, ...r, cpu });
      ctx.progress(
        `api round ${round}/${ctx.rounds} ${variant}: ${fmt(r.requestsPerSecond)} req/s, p99 ${fmt(r.p99Ms)} ms, non-2xx ${r.non2xx}, errors ${r.errors}`,
      );
      // Errors under load are reported in the table; a run with no success at all fails.
      if (r.ok === 0) {
        throw new Error(
          `${variant}: no 2xx answer (${JSON.stringify(r.statusCodes)}, ${r.errors} errors)`,
        );
      }
    });
  } finally {
    await service?.stop();
    await serviceTx?.stop();
    await serviceTraced?.stop();
    await sink?.close();
    await plain?.stop();
    await plainSchema?.drop();
    await serviceSchema?.drop();
    await deleteTopics(kafka, prefix).catch(() => undefined);
  }
  const rps = Object.fromEntries(
    VARIANTS.map((v) => [v, summarize(runs[v].map((r) => r.requestsPerSecond))]),
  ) as Record<ApiVariant, Summary>;
  const p99 = Object.fromEntries(
    VARIANTS.map((v) => [v, summarize(runs[v].map((r) => r.p99Ms))]),
  ) as Record<ApiVariant, Summary>;
  const table = markdownTable(
    [
      'endpoint',
      'req/s median (min–max)',
      'p99 ms median (min–max)',
      'ratio to plain insert (target outbox ≥ 80%)',
      'failed requests (all runs)',
      'CPU, % of a core: machine / PG / server / autocannon',
    ],
    VARIANTS.map((v) => [
      LABELS[v],
      spread(rps[v]),
      spread(p99[v], 1),
      ratio(rps[v].median, rps.plain.median),
      fmt(runs[v].reduce((n, r) => n + r.non2xx + r.errors, 0)),
      ['machine', 'postgres', 'server', 'autocannon']
        .map((k) => fmt(summarize(runs[v].map((r) => r.cpu[k] ?? NaN)).median))
        .join(' / '),
    ]),
  );
  // order-api's CPU per request (ms of one core): steadier than req/s when other work
  // shares the cores, since it does not count the time the server waits for them.
  const cpuPerRequest = (v: ApiVariant) =>
    summarize(runs[v].map((r) => ((r.cpu.server ?? NaN) * 10) / r.requestsPerSecond)).median;
  const traced = VARIANTS.includes('outbox-traced')
    ? `\n\nTracing's cost: outbox-traced / outbox = ${ratio(rps['outbox-traced'].median, rps.outbox.median)} of the req/s (medians); order-api's CPU per request ${fmt(cpuPerRequest('outbox'), 2)} ms untraced, ${fmt(cpuPerRequest('outbox-traced'), 2)} ms traced (× ${fmt(cpuPerRequest('outbox-traced') / cpuPerRequest('outbox'), 2)}); the sink received ${fmt(sink?.received().requests ?? 0)} exports, ${fmt((sink?.received().bytes ?? 0) / 1e6, 1)} MB.`
    : '';
  return {
    title: `API throughput: POST /orders, autocannon ${CONNECTIONS} connections, ${seconds} s per run`,
    table: `${table}\n\nTarget: outbox mode ≥ 3,000 req/s on this machine and ≥ 80% of plain insert. No relay runs during the load; load generator, server and PostgreSQL share the 2 cores.${traced}`,
    data: { seconds, connections: CONNECTIONS, runs, requestsPerSecond: rps, p99 },
    chartTitle: 'API: req/s, ratio to the plain insert (target outbox ≥ 80%)',
    chart: VARIANTS.map((v) => ({
      label: v,
      value: rps[v].median / rps.plain.median,
      ...(v === 'outbox' || v === 'outbox-transaction' ? { target: 0.8 } : {}),
    })),
  };
}

async function load(
  url: string,
  mode: ApiVariant,
  seconds: number,
): Promise<Omit<ApiRun, 'round' | 'cpu'>> {
  let n = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    // A different user and sku per request, as real traffic would be.
    requests: [
      {
        method: 'POST',
        setupRequest: (req) => ({ ...req, body: body(n++, mode) }),
      },
    ],
  });
  return {
    requestsPerSecond: result.requests.average,
    p99Ms: result.latency.p99,
    p50Ms: result.latency.p50,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statusCodes: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, v]) => [code, v.count ?? 0]),
    ),
  };
}

function body(i: number, mode: ApiVariant): string {
  return JSON.stringify({
    userId: 1 + (i % 100_000),
    sku: SKUS[i % SKUS.length],
    quantity: 1 + (i % 3),
    ...(mode === 'outbox' || mode === 'outbox-transaction' || mode === 'outbox-traced'
      ? { mode: 'outbox' }
      : mode === 'naive'
        ? { mode }
        : {}),
  });
}
