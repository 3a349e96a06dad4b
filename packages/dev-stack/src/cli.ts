/**
 * `stack up|down|status`: command-line front of the dev-stack.
 * Run as `tsx src/cli.ts up` or through bin/stack.mjs.
 */
import { parseArgs } from 'node:util';
import { commandLine } from './command-line.ts';
import { connectorStatus, connectState, startConnect } from './connect.ts';
import { startStack, stackStatus, stopStack, type PartStatus } from './index.ts';

const USAGE = `usage: stack up [--cdc] [--schema S] [--topic T] | down | status

Local PostgreSQL (embedded) and Apache Kafka (KRaft, jars from Maven Central), no Docker.
  up       start both, or reuse what runs; prints DATABASE_URL and KAFKA_BROKERS
           --cdc also starts Kafka Connect with Debezium's outbox connector (the seed's
           alternative relay) on S.outbox (default public) → T (default orders.events),
           and waits until its task is RUNNING; jars from Maven on first use (~90 s)
  down     stop Connect (dropping its replication slot: a slot left behind holds WAL),
           the broker (SIGTERM, SIGKILL after 20 s) and PostgreSQL (fast shutdown)
  status   up/down and where (and Connect's task state); exit code 1 when a part is down
Environment: DATABASE_URL / KAFKA_BROKERS use external parts instead; OUTBOX_DATA_DIR
(default <repo>/.data) and OUTBOX_KAFKA_LIBS_DIR move the data and the jar cache.`;

async function main(command: string | undefined, extra: string[]): Promise<number> {
  const cli = commandLine('stack', USAGE, process.argv.slice(2));
  const { values } = cli.parse(() =>
    parseArgs({
      args: extra,
      options: {
        cdc: { type: 'boolean', default: false },
        schema: { type: 'string' },
        topic: { type: 'string' },
      },
    }),
  );
  if (command !== 'up' && extra.length > 0) cli.fail(`unexpected argument "${extra[0]}"`);
  if (!values.cdc && (values.schema || values.topic))
    cli.fail('--schema and --topic go with --cdc');
  switch (command) {
    case 'up': {
      const endpoints = await startStack();
      process.stdout.write(`DATABASE_URL=${endpoints.databaseUrl}\n`);
      process.stdout.write(`KAFKA_BROKERS=${endpoints.kafkaBrokers.join(',')}\n`);
      if (values.cdc) {
        const connect = await startConnect({
          ...(values.schema ? { schema: values.schema } : {}),
          ...(values.topic ? { topic: values.topic } : {}),
        });
        process.stdout.write(`CONNECT_URL=${connect.restUrl}\n`);
      }
      return 0;
    }
    case 'down':
      await stopStack();
      return 0;
    case 'status': {
      const status = await stackStatus();
      process.stdout.write(
        `${line('postgres', status.postgres)}\n${line('kafka', status.kafka)}\n`,
      );
      const connect = await connectState();
      if (connect) {
        const task = (await connectorStatus(connect))?.tasks[0]?.state ?? 'not answering';
        process.stdout.write(
          `connect  up    http://127.0.0.1:${connect.restPort} pid ${connect.pid} task ${task} (${connect.schema}.outbox → ${connect.topic}, slot ${connect.slot})\n`,
        );
      }
      return status.postgres.state === 'up' && status.kafka.state === 'up' ? 0 : 1;
    }
    default:
      return cli.fail(command ? `unknown command "${command}"` : 'a command is needed');
  }
}

function line(name: string, part: PartStatus): string {
  const where = part.url ?? '-';
  const pid = part.pid ? ` pid ${part.pid}` : '';
  const external = part.external ? ' (external)' : '';
  return `${name.padEnd(9)}${part.state.padEnd(5)} ${where}${pid}${external}`;
}

main(process.argv[2], process.argv.slice(3)).then(
  // Explicit exit: pg/kafkajs sockets or timers must not keep the CLI alive.
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `stack ${process.argv[2] ?? ''}: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exit(1);
  },
);
