import { spawnSync } from 'node:child_process';

/** Fails with one message naming every missing tool and how to get it. */
export function assertKafkaTools(env: NodeJS.ProcessEnv): void {
  const missing = ['java', 'mvn'].filter((tool) => !commandExists(tool, env));
  if (missing.length === 0) return;
  throw new Error(
    `dev-stack needs ${missing.join(' and ')} on PATH to run a local Kafka broker. ` +
      'Install them (Debian/Ubuntu: `apt-get install openjdk-17-jre-headless maven`), ' +
      'or point KAFKA_BROKERS at an existing broker (e.g. KAFKA_BROKERS=127.0.0.1:9092), ' +
      'or run Kafka with docker-compose and set KAFKA_BROKERS accordingly.',
  );
}

function commandExists(command: string, env: NodeJS.ProcessEnv): boolean {
  // `-version` works for both java and mvn; spawnSync reports ENOENT as `error`.
  const result = spawnSync(command, ['-version'], { env, stdio: 'ignore' });
  return !result.error && result.status === 0;
}
