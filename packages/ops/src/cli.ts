import { parseArgs } from 'node:util';
import { relayPartitioner } from '@outbox/core';
import { commandLine, startStack, UsageError, type CommandLine } from '@outbox/dev-stack';
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

const USAGE = `usage: npm run ops -- <command> [options]   (DATABASE_SCHEMA picks the schema, default public)

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

const cli: CommandLine = commandLine('ops', USAGE, process.argv.slice(2));
const { values, positionals } = cli.parse(() =>
  parseArgs({
    args: process.argv.slice(2),
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
    },
  }),
);
const [command, sub] = positionals;
const COMMANDS = ['cleanup', 'daemon', 'partition', 'replay', 'dead-letters', 'requeue'];
if (!command) cli.fail('a command is needed');
if (
  !COMMANDS.includes(command) ||
  (command === 'partition' && !['enable', 'maintain', 'status'].includes(sub ?? ''))
)
  cli.fail(`unknown command "${positionals.join(' ')}"`);

function int(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0)
    throw new UsageError(`--${name} must be a positive integer (got "${text}")`);
  return n;
}
function duration(text: string, name: string): number {
  try {
    return parseDuration(text);
  } catch (error) {
    throw new UsageError(`--${name}: ${(error as Error).message}`);
  }
}
function date(text: string | undefined, name: string): Date | undefined {
  if (text === undefined) return undefined;
  const d = new Date(text);
  if (Number.isNaN(d.getTime()))
    throw new UsageError(`--${name} must be a date (ISO 8601) (got "${text}")`);
  return d;
}
function policy(): RetentionPolicy {
  const outboxSeconds = duration(values['outbox-retention'], 'outbox-retention');
  // Default: a day longer than the outbox, so a replay never outruns the inbox.
  const inboxSeconds = values['inbox-retention']
    ? duration(values['inbox-retention'], 'inbox-retention')
    : outboxSeconds + 86_400;
  return {
    outboxSeconds,
    inboxSeconds,
    batchSize: int(values.batch, 'batch'),
    daysAhead: int(values['days-ahead'], 'days-ahead'),
  };
}
function replayRange(): ReplayRange {
  const range: ReplayRange = {};
  if (values['from-id']) range.fromId = String(int(values['from-id'], 'from-id'));
  if (values['to-id']) range.toId = String(int(values['to-id'], 'to-id'));
  const since = date(values.since, 'since');
  const until = date(values.until, 'until');
  if (since) range.since = since;
  if (until) range.until = until;
  if (values['aggregate-type']) range.aggregateType = values['aggregate-type'];
  if (values['aggregate-id']) range.aggregateId = values['aggregate-id'];
  return range;
}
function requeueIds(): string[] | 'all' {
  if (!values.all && !values.ids) throw new UsageError('requeue needs --ids 1,2,3 or --all');
  return values.all ? 'all' : values.ids!.split(',').map((id) => String(int(id.trim(), 'ids')));
}
// Every value is checked before anything connects: a typo costs nothing and says so.
cli.parse(() => {
  if (command === 'cleanup' || command === 'daemon') policy();
  if (command === 'daemon') duration(values.every, 'every');
  if (command === 'partition') int(values['days-ahead'], 'days-ahead');
  if (command === 'partition' && sub === 'maintain') duration(values.retention, 'retention');
  if (command === 'replay') replayRange();
  if (command === 'requeue') requeueIds();
});
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
      intervalMs: duration(values.every, 'every') * 1000,
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
        retentionSeconds: duration(values.retention, 'retention'),
        daysAhead: int(values['days-ahead'], 'days-ahead'),
      }),
    );
  } else if (command === 'partition' && sub === 'status') {
    const partitioned = await isPartitioned(pool);
    print({ partitioned, partitions: partitioned ? await partitions(pool) : [] });
  } else if (command === 'replay') {
    const range = replayRange();
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
    const ids = requeueIds();
    print({ requeued: await requeueDeadLetters(pool, ids) });
  }
} catch (error) {
  if (error instanceof UsageError) cli.fail(error.message);
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
} finally {
  await pool.end();
}
