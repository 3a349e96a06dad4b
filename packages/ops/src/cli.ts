import { parseArgs } from 'node:util';
import { startStack } from '@outbox/dev-stack';
import { relayPartitioner } from '@outbox/core';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { z } from 'zod';
import { runRetention, RetentionJob, type RetentionPolicy } from './cleanup/job.ts';
import { listDeadLetters, requeueDeadLetters } from './dead-letters/dead-letters.ts';
import { parseDuration } from './duration.ts';
import { isPartitioned, partitions } from './partitions/catalog.ts';
import { enablePartitioning } from './partitions/enable.ts';
import { maintainPartitions } from './partitions/maintain.ts';
import { replay, type ReplayRange } from './replay/replay.ts';

const USAGE = `npm run ops -- <command> [options]   (DATABASE_SCHEMA picks the schema, default public)

  cleanup   [--outbox-retention 7d] [--inbox-retention 8d] [--batch 1000]
            delete sent events and inbox markers past retention, in bounded batches
            (partitioned outbox: drop whole days instead)
  daemon    [--every 1h] [cleanup options]      the same, as a background job
  partition enable [--days-ahead 7]             convert the outbox to daily partitions (opt-in)
  partition maintain [--retention 7d] [--days-ahead 7]
  partition status
  replay    --from-id N [--to-id M] | --since ISO [--until ISO]
            [--aggregate-type T] [--aggregate-id ID] [--topic T] [--dry-run]
            publish sent events again; consumers' inboxes skip what they have
  dead-letters                                  outbox events past the attempt cap
  requeue   --ids 1,2,3 | --all                 put dead-lettered events back in the queue`;

const envSchema = z.object({
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$/, 'DATABASE_SCHEMA must be a plain lower-case identifier')
    .default('public'),
});

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'outbox-retention': { type: 'string', default: '7d' },
    'inbox-retention': { type: 'string' },
    retention: { type: 'string', default: '7d' },
    batch: { type: 'string', default: '1000' },
    every: { type: 'string', default: '1h' },
    'days-ahead': { type: 'string', default: '7' },
    'from-id': { type: 'string' },
    'to-id': { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    'aggregate-type': { type: 'string' },
    'aggregate-id': { type: 'string' },
    topic: { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
    ids: { type: 'string' },
    all: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
const [command, sub] = positionals;
if (values.help || !command) {
  console.log(USAGE);
  process.exit(command || values.help ? 0 : 1);
}

function int(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer`);
  return n;
}
function date(text: string | undefined, name: string): Date | undefined {
  if (text === undefined) return undefined;
  const d = new Date(text);
  if (Number.isNaN(d.getTime())) throw new Error(`--${name} must be a date (ISO 8601)`);
  return d;
}
function policy(): RetentionPolicy {
  const outboxSeconds = parseDuration(values['outbox-retention']);
  // Default: a day longer than the outbox, so a replay never outruns the inbox.
  const inboxSeconds = values['inbox-retention']
    ? parseDuration(values['inbox-retention'])
    : outboxSeconds + 86_400;
  return {
    outboxSeconds,
    inboxSeconds,
    batchSize: int(values.batch, 'batch'),
    daysAhead: int(values['days-ahead'], 'days-ahead'),
  };
}
const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));

const env = envSchema.parse(process.env);
const stack = await startStack({ log: () => undefined });
const pool = new pg.Pool({
  connectionString: stack.databaseUrl,
  options: `-c search_path=${env.DATABASE_SCHEMA}`,
  max: 4,
});
pool.on('error', (error) => console.error(`pool: ${error.message}`));
try {
  if (command === 'cleanup') {
    print(await runRetention(pool, policy()));
  } else if (command === 'daemon') {
    const job = new RetentionJob(pool, policy(), {
      intervalMs: parseDuration(values.every) * 1000,
      onRun: (report) => console.log(JSON.stringify({ at: new Date().toISOString(), ...report })),
      onError: (error) => console.error(`cleanup pass failed: ${String(error)}`),
    });
    job.start();
    await new Promise<void>((resolve) => {
      for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
    });
    await job.stop();
  } else if (command === 'partition' && sub === 'enable') {
    print(await enablePartitioning(pool, { daysAhead: int(values['days-ahead'], 'days-ahead') }));
  } else if (command === 'partition' && sub === 'maintain') {
    print(
      await maintainPartitions(pool, {
        retentionSeconds: parseDuration(values.retention),
        daysAhead: int(values['days-ahead'], 'days-ahead'),
      }),
    );
  } else if (command === 'partition' && sub === 'status') {
    const partitioned = await isPartitioned(pool);
    print({ partitioned, partitions: partitioned ? await partitions(pool) : [] });
  } else if (command === 'replay') {
    const range: ReplayRange = {};
    if (values['from-id']) range.fromId = String(int(values['from-id'], 'from-id'));
    if (values['to-id']) range.toId = String(int(values['to-id'], 'to-id'));
    const since = date(values.since, 'since');
    const until = date(values.until, 'until');
    if (since) range.since = since;
    if (until) range.until = until;
    if (values['aggregate-type']) range.aggregateType = values['aggregate-type'];
    if (values['aggregate-id']) range.aggregateId = values['aggregate-id'];
    const kafka = new Kafka({
      clientId: 'ops-replay',
      brokers: stack.kafkaBrokers,
      logLevel: logLevel.WARN,
    });
    const producer = kafka.producer({
      // Each message's partition remembered: replay checks every one was acknowledged.
      createPartitioner: relayPartitioner,
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
    });
    await producer.connect();
    try {
      print(
        await replay({
          pool,
          producer,
          range,
          dryRun: values['dry-run'],
          ...(values.topic ? { topic: values.topic } : {}),
        }),
      );
    } finally {
      await producer.disconnect();
    }
  } else if (command === 'dead-letters') {
    print(await listDeadLetters(pool));
  } else if (command === 'requeue') {
    if (!values.all && !values.ids) throw new Error('requeue needs --ids 1,2,3 or --all');
    const ids = values.all
      ? 'all'
      : values.ids!.split(',').map((id) => String(int(id.trim(), 'ids')));
    print({ requeued: await requeueDeadLetters(pool, ids) });
  } else {
    console.error(`unknown command "${positionals.join(' ')}"\n\n${USAGE}`);
    process.exitCode = 1;
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
} finally {
  await pool.end();
}
