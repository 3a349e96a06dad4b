import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { StackContext } from './options.ts';
import { formatKafkaStorage, writeKafkaConfig } from './kafka-config.ts';
import { ensureKafkaJars } from './kafka-jars.ts';
import { probeKafka } from './kafka-probe.ts';
import { assertKafkaTools } from './kafka-tools.ts';
import { isPortOpen, pickPort } from './ports.ts';
import { isPidAlive, terminate } from './process.ts';
import { readState, updateState, type KafkaState } from './state.ts';
import { waitFor } from './wait.ts';

/** Whether the recorded local broker is still ours and answering metadata requests. */
export async function kafkaRunning(state: KafkaState | undefined): Promise<boolean> {
  if (!state || !isPidAlive(state.pid) || !(await isPortOpen(state.port))) return false;
  return probeKafka(state.brokers, false).catch(() => false);
}

/**
 * Returns broker addresses: KAFKA_BROKERS if set (after a metadata check), else the local
 * KRaft broker, started if needed. It runs detached in its own process group so it outlives
 * the CLI that started it; `stopStack` ends it.
 */
export async function startKafka(
  ctx: StackContext,
): Promise<{ brokers: string[]; pid: number | null }> {
  if (ctx.externalBrokers) {
    const brokers = ctx.externalBrokers;
    await waitFor(() => probeKafka(brokers, false), {
      what: 'Kafka at KAFKA_BROKERS',
      timeoutMs: 15_000,
    });
    ctx.log(`kafka: using KAFKA_BROKERS ${brokers.join(',')}`);
    return { brokers, pid: null };
  }
  const { paths } = ctx;
  const previous = (await readState(paths.stateFile)).kafka;
  if (previous && (await kafkaRunning(previous))) {
    ctx.log(`kafka: already running (pid ${previous.pid}) at ${previous.brokers.join(',')}`);
    return { brokers: previous.brokers, pid: previous.pid };
  }

  assertKafkaTools(ctx.env);
  await mkdir(paths.logsDir, { recursive: true });
  await ensureKafkaJars(ctx);
  const port = await pickPort(previous?.port);
  const controllerPort = await pickPort(previous?.controllerPort, [port]);
  const files = await writeKafkaConfig(ctx, { port, controllerPort });
  await formatKafkaStorage(ctx, files.serverProperties);

  const fd = openSync(paths.kafkaLog, 'a');
  let pid: number;
  try {
    const child = spawn(
      'java',
      [
        '-Xmx512m',
        '-Xms256m',
        `-Dlog4j2.configurationFile=${files.log4jConfig}`,
        '-cp',
        `${paths.kafkaLibsDir}/*`,
        'kafka.Kafka',
        files.serverProperties,
      ],
      { detached: true, stdio: ['ignore', fd, fd], env: ctx.env, cwd: paths.kafkaDir },
    );
    child.unref();
    if (!child.pid) throw new Error('could not spawn java');
    pid = child.pid;
  } finally {
    closeSync(fd);
  }
  const brokers = [`127.0.0.1:${port}`];
  // Recorded before the wait, so `stack down` can clean up a broker that never became ready.
  await updateState(paths.stateFile, { kafka: { pid, port, controllerPort, brokers } });
  ctx.log(`kafka: starting (pid ${pid}) on ${brokers[0]}, waiting until it serves groups`);
  await waitFor(() => probeKafka(brokers), {
    what: 'the local Kafka broker',
    timeoutMs: 90_000,
    intervalMs: 500,
    hint: `see ${paths.kafkaLog}`,
    abort: () => (isPidAlive(pid) ? undefined : 'the broker process exited during start-up'),
  });
  ctx.log(`kafka: started (pid ${pid}) at ${brokers.join(',')}, log ${paths.kafkaLog}`);
  return { brokers, pid };
}

/** SIGTERMs the broker's process group (controlled shutdown), SIGKILL after 20 s. */
export async function stopKafka(ctx: StackContext): Promise<void> {
  const state = (await readState(ctx.paths.stateFile)).kafka;
  if (!state || !isPidAlive(state.pid)) {
    ctx.log('kafka: not running');
    return;
  }
  await terminate(state.pid, { signal: 'SIGTERM', group: true, timeoutMs: 20_000 });
  await updateState(ctx.paths.stateFile, { kafka: { ...state, pid: null } });
  ctx.log(`kafka: stopped (pid ${state.pid})`);
}
