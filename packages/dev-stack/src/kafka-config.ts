import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StackContext } from './options.ts';
import { runLogged } from './kafka-jars.ts';

/** Ports of the single KRaft node (broker and controller listeners). */
export interface KafkaPorts {
  port: number;
  controllerPort: number;
}

/** Files the broker is started with. */
export interface KafkaConfigFiles {
  serverProperties: string;
  log4jConfig: string;
}

/**
 * Writes server.properties and the log4j2 config. Rewritten on every start because the ports
 * may change; the small offsets topic makes the group coordinator available within seconds.
 */
export async function writeKafkaConfig(
  ctx: StackContext,
  ports: KafkaPorts,
): Promise<KafkaConfigFiles> {
  const { kafkaDir, kafkaDataDir } = ctx.paths;
  await mkdir(kafkaDataDir, { recursive: true });
  const serverProperties = join(kafkaDir, 'server.properties');
  const log4jConfig = join(kafkaDir, 'log4j2.yaml');
  const props = [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${ports.controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${ports.port},CONTROLLER://127.0.0.1:${ports.controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${ports.port}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${kafkaDataDir}`,
    'num.partitions=3',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=3',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=3',
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=true',
  ];
  await writeFile(serverProperties, `${props.join('\n')}\n`);
  // Console only: stdout is redirected to logs/kafka.log by the spawner.
  const log4j = [
    'Configuration:',
    '  Appenders:',
    '    Console:',
    '      name: STDOUT',
    '      PatternLayout:',
    '        pattern: "[%d] %p %m (%c)%n"',
    '  Loggers:',
    '    Root:',
    '      level: INFO',
    '      AppenderRef:',
    '        - ref: STDOUT',
  ];
  await writeFile(log4jConfig, `${log4j.join('\n')}\n`);
  return { serverProperties, log4jConfig };
}

/** Formats the KRaft storage once; meta.properties in the log dir marks it as done. */
export async function formatKafkaStorage(
  ctx: StackContext,
  serverProperties: string,
): Promise<void> {
  const { kafkaDataDir, kafkaLibsDir, kafkaLog } = ctx.paths;
  if (existsSync(join(kafkaDataDir, 'meta.properties'))) return;
  ctx.log(`kafka: formatting storage in ${kafkaDataDir}`);
  const clusterId = await javaOutput(ctx, ['kafka.tools.StorageTool', 'random-uuid']);
  // No --standalone: the static controller.quorum.voters already defines the quorum.
  const args = ['-cp', `${kafkaLibsDir}/*`, 'kafka.tools.StorageTool', 'format'];
  const code = await runLogged(
    'java',
    [...args, '-t', clusterId, '-c', serverProperties],
    kafkaLog,
    ctx.env,
  );
  if (code !== 0) throw new Error(`Kafka storage format failed (exit ${code}); see ${kafkaLog}`);
}

async function javaOutput(ctx: StackContext, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'java',
      ['-cp', `${ctx.paths.kafkaLibsDir}/*`, ...args],
      { env: ctx.env },
      (err, stdout) => (err ? reject(err) : resolve(stdout.trim().split('\n').pop() ?? '')),
    );
  });
}
