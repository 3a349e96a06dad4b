import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import {
  audit,
  demoTopics,
  FAILURE_POINT_NAMES,
  FailurePoints,
  type FailureMode,
  type FailurePointName,
} from '@outbox/core';
import { startStack } from '@outbox/dev-stack';

/**
 * `npm run chaos -- <command>`: the failure points and the auditor from the shell.
 *   list                                  every failure point and its state
 *   arm <name> once|on|off                 arm or disarm a point
 *   arm <name> times <N>                   fire N times
 *   arm <name> on --seconds <N>            on for N seconds (e.g. worker.kafka_outage)
 *   audit                                  the invariants, as JSON
 *   poison                                 produce a message the consumer cannot handle
 * Running services pick changes up through LISTEN/NOTIFY: no restart.
 */
const [command, name, mode, ...rest] = process.argv.slice(2);
const stack = await startStack({ log: () => undefined });
const pool = new pg.Pool({ connectionString: stack.databaseUrl });
const points = new FailurePoints(pool);
try {
  if (command === 'list') {
    for (const s of await points.list()) {
      console.log(
        `${s.name.padEnd(38)} ${s.mode.padEnd(6)} remaining=${s.remaining} fired=${s.fired} ${JSON.stringify(s.params)}`,
      );
    }
  } else if (command === 'arm') {
    if (!FAILURE_POINT_NAMES.includes(name as FailurePointName)) {
      throw new Error(`unknown failure point "${name}"; one of: ${FAILURE_POINT_NAMES.join(', ')}`);
    }
    if (!['once', 'times', 'on', 'off'].includes(mode ?? ''))
      throw new Error('mode must be once, times N, on or off');
    const times = mode === 'times' ? Number(rest[0]) : undefined;
    const secondsAt = rest.indexOf('--seconds');
    const seconds = secondsAt >= 0 ? Number(rest[secondsAt + 1]) : undefined;
    const params = seconds ? { until: Date.now() + seconds * 1000, seconds } : {};
    const state = await points.arm(name as FailurePointName, {
      mode: mode as FailureMode,
      times,
      params,
    });
    console.log(
      `${state.name}: ${state.mode}${times ? ` ×${times}` : ''}${seconds ? ` for ${seconds}s` : ''}`,
    );
  } else if (command === 'poison') {
    const kafka = new Kafka({ brokers: stack.kafkaBrokers, logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    const topic = demoTopics(process.env.TOPIC_PREFIX ?? '').orders;
    await producer.send({
      topic,
      messages: [{ key: 'poison', value: 'not json {', headers: { event_type: 'OrderCreated' } }],
    });
    await producer.disconnect();
    console.log(`sent a poison message to ${topic}: watch consumerDeadLettered in the audit`);
  } else if (command === 'audit') {
    console.log(JSON.stringify(await audit(pool, { settleSeconds: 5 }), null, 2));
  } else {
    console.error(
      'usage: chaos list | arm <name> once|on|off | arm <name> times N | arm <name> on --seconds N | audit | poison',
    );
    process.exitCode = 2;
  }
} catch (error) {
  console.error(`chaos: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  await pool.end();
}
