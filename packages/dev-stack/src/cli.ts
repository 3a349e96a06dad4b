/**
 * `stack up|down|status|demo`: command-line front of the dev-stack.
 * Run as `tsx src/cli.ts up` or through bin/stack.mjs.
 */
import { startStack, stackStatus, stopStack, type PartStatus } from './index.ts';

const USAGE = 'usage: stack up|down|status|demo';

async function main(command: string | undefined): Promise<number> {
  switch (command) {
    case 'up': {
      const endpoints = await startStack();
      process.stdout.write(`DATABASE_URL=${endpoints.databaseUrl}\n`);
      process.stdout.write(`KAFKA_BROKERS=${endpoints.kafkaBrokers.join(',')}\n`);
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
      return status.postgres.state === 'up' && status.kafka.state === 'up' ? 0 : 1;
    }
    case 'demo':
      process.stdout.write('demo: not yet implemented\n');
      return 0;
    default:
      process.stderr.write(`${USAGE}\n`);
      return 2;
  }
}

function line(name: string, part: PartStatus): string {
  const where = part.url ?? '-';
  const pid = part.pid ? ` pid ${part.pid}` : '';
  const external = part.external ? ' (external)' : '';
  return `${name.padEnd(9)}${part.state.padEnd(5)} ${where}${pid}${external}`;
}

main(process.argv[2]).then(
  // Explicit exit: pg/kafkajs sockets or timers must not keep the CLI alive.
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `stack ${process.argv[2] ?? ''}: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exit(1);
  },
);
