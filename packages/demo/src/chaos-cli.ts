import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import {
  audit,
  sentNotDelivered,
  demoTopics,
  FAILURE_POINT_NAMES,
  FailurePoints,
  readRelayAcks,
  readRelayMode,
  relayAcksSettingSchema,
  relayKindSchema,
  writeRelayAcks,
  requestRelay,
  type FailureMode,
  type FailurePointName,
} from '@outbox/lab';
import { pgConfig } from '@outbox/core';
import { commandLine, startStack } from '@outbox/dev-stack';

const USAGE = `usage: npm run chaos -- list | arm <name> once|on|off | arm <name> times N | arm <name> on --seconds N | audit | poison | relay [polling|cdc] | acks [all|1]

The failure points and the auditor from the shell; running services pick changes up
through LISTEN/NOTIFY, no restart.
  list                        every failure point and its state
  arm <name> once|on|off      arm or disarm a point
  arm <name> times N          fire N times
  arm <name> on --seconds N   on for N seconds (e.g. worker.kafka_outage)
  audit                       the invariants, as JSON
  poison                      produce a message the consumer cannot handle
  relay                       which relay publishes (polling relay or Debezium CDC)
  relay polling|cdc           switch the relay live; the running demo carries it out
  acks                        the relay's producer acks (all, the default, or 1)
  acks all|1                  switch them live; the workers follow within a second.
                              1 is UNSAFE, for the 3-broker lesson (npm run demo --
                              --brokers 3): a leader killed before its followers copied
                              a batch loses events the outbox marked sent
Environment: DATABASE_SCHEMA and TOPIC_PREFIX (default none: a demo started with them is
another demo, and its failure points and audit are its own), and the dev-stack's
(DATABASE_URL, KAFKA_BROKERS).`;

const argv = process.argv.slice(2);
const cli = commandLine('chaos', USAGE, argv);
const [command, name, mode, ...rest] = argv;
if (!['list', 'arm', 'audit', 'poison', 'relay', 'acks'].includes(command ?? ''))
  cli.fail(command ? `unknown command "${command}"` : 'a command is needed');
let armed:
  { name: FailurePointName; mode: FailureMode; times?: number; seconds?: number } | undefined;
if (command === 'arm') {
  if (!FAILURE_POINT_NAMES.includes(name as FailurePointName))
    cli.fail(`unknown failure point "${name ?? ''}"; one of: ${FAILURE_POINT_NAMES.join(', ')}`);
  if (!['once', 'times', 'on', 'off'].includes(mode ?? ''))
    cli.fail('mode must be once, times N, on or off');
  const times = mode === 'times' ? Number(rest[0]) : undefined;
  if (times !== undefined && !(Number.isInteger(times) && times > 0))
    cli.fail(`times needs a whole number > 0 (got "${rest[0] ?? ''}")`);
  const secondsAt = rest.indexOf('--seconds');
  const seconds = secondsAt >= 0 ? Number(rest[secondsAt + 1]) : undefined;
  if (seconds !== undefined && !(seconds > 0))
    cli.fail(`--seconds needs a number > 0 (got "${rest[secondsAt + 1] ?? ''}")`);
  armed = {
    name: name as FailurePointName,
    mode: mode as FailureMode,
    ...(times ? { times } : {}),
    ...(seconds ? { seconds } : {}),
  };
}
if (command === 'relay' && name !== undefined && !relayKindSchema.safeParse(name).success)
  cli.fail(`relay must be polling or cdc (got "${name}")`);
if (command === 'acks' && name !== undefined && !relayAcksSettingSchema.safeParse(name).success)
  cli.fail(`acks must be all or 1 (got "${name}")`);
const stack = await startStack({ log: () => undefined });
// The demo's schema (DATABASE_SCHEMA), as every service of that demo uses it.
const pool = new pg.Pool(
  pgConfig({
    DATABASE_URL: stack.databaseUrl,
    DATABASE_SCHEMA: process.env.DATABASE_SCHEMA || 'public',
  }),
);
const points = new FailurePoints(pool);
try {
  if (command === 'list') {
    for (const s of await points.list()) {
      console.log(
        `${s.name.padEnd(38)} ${s.mode.padEnd(6)} remaining=${s.remaining} fired=${s.fired} ${JSON.stringify(s.params)}`,
      );
    }
  } else if (armed) {
    const { times, seconds } = armed;
    const params = seconds ? { until: Date.now() + seconds * 1000, seconds } : {};
    const state = await points.arm(armed.name, { mode: armed.mode, times, params });
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
  } else if (command === 'relay') {
    if (name) await requestRelay(pool, relayKindSchema.parse(name));
    const mode = await readRelayMode(pool);
    console.log(
      `relay: ${mode.active.relay} publishes${mode.wanted === mode.active.relay ? '' : `, switching to ${mode.wanted}`}${mode.phase ? ` (${mode.phase})` : ''}`,
    );
    if (name && name !== mode.active.relay)
      console.log('the running demo carries the switch out: run this again to follow it');
  } else if (command === 'acks') {
    if (name) await writeRelayAcks(pool, relayAcksSettingSchema.parse(name));
    const acks = await readRelayAcks(pool);
    console.log(
      acks === 'all'
        ? 'acks: all (safe: the in-sync replicas have a batch before the relay marks it sent)'
        : 'acks: 1 (UNSAFE: the leader alone has a batch when the relay marks it sent)',
    );
  } else if (command === 'audit') {
    const report = await audit(pool, { settleSeconds: 5 });
    // The rows behind lost events: marked sent, never delivered (the acks = 1 lesson).
    const lost = await sentNotDelivered(pool, { settleSeconds: 5, limit: 20 });
    console.log(JSON.stringify({ ...report, sentNotDelivered: lost }, null, 2));
  }
} catch (error) {
  console.error(`chaos: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  await pool.end();
}
