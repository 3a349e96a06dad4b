import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRepoRoot, stackPaths } from '@outbox/dev-stack';
import { silentLogger } from '@outbox/core';
import { baseConfigSchema, kafkaClient, kafkaSecurity, parseConfig } from '../src/index.ts';

/**
 * A managed Kafka asks for SASL (and TLS): the services reach it by configuration only.
 * This starts a broker of its own whose client listener requires SASL/PLAIN, and
 * connects through `kafkaClient` with the settings parsed from environment variables,
 * as every service does. (TLS maps to kafkajs' `ssl` the same way; no TLS broker here.)
 */
const USER = 'outbox-app';
const PASSWORD = `pw-${randomUUID()}`;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

const envFor = (brokers: string, extra: Record<string, string>) =>
  parseConfig(baseConfigSchema, {
    DATABASE_URL: 'postgres://unused@127.0.0.1/unused',
    KAFKA_BROKERS: brokers,
    ...extra,
  });

describe('Kafka with SASL, by configuration only', () => {
  const root = findRepoRoot();
  const libs = stackPaths(
    process.env.OUTBOX_DATA_DIR || join(root, '.data'),
    process.env.OUTBOX_KAFKA_LIBS_DIR || undefined,
  ).kafkaLibsDir;
  const dir = join(root, '.data', `sasl-test-${process.pid}`);
  let broker: ChildProcess | undefined;
  let brokers = '';

  beforeAll(async () => {
    const [port, controllerPort] = [await freePort(), await freePort()];
    brokers = `127.0.0.1:${port}`;
    mkdirSync(join(dir, 'data'), { recursive: true });
    const jaas = (login: string) =>
      `org.apache.kafka.common.security.plain.PlainLoginModule required ${login}` +
      ` user_admin="admin-secret" user_${USER}="${PASSWORD}";`;
    const props = [
      'process.roles=broker,controller',
      'node.id=1',
      `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
      `listeners=SASL_PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
      `advertised.listeners=SASL_PLAINTEXT://127.0.0.1:${port}`,
      'controller.listener.names=CONTROLLER',
      'listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT',
      'inter.broker.listener.name=SASL_PLAINTEXT',
      'sasl.enabled.mechanisms=PLAIN',
      'sasl.mechanism.inter.broker.protocol=PLAIN',
      `listener.name.sasl_plaintext.plain.sasl.jaas.config=${jaas('username="admin" password="admin-secret"')}`,
      `log.dirs=${join(dir, 'data')}`,
      'offsets.topic.replication.factor=1',
      'offsets.topic.num.partitions=1',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'group.initial.rebalance.delay.ms=0',
      'auto.create.topics.enable=true',
    ];
    const properties = join(dir, 'server.properties');
    writeFileSync(properties, `${props.join('\n')}\n`);
    const cp = `${libs}/*`;
    const format = spawnSync(
      'java',
      [
        '-cp',
        cp,
        'kafka.tools.StorageTool',
        'format',
        '-t',
        randomBytes(16).toString('base64url'),
        '-c',
        properties,
      ],
      { encoding: 'utf8' },
    );
    if (format.status !== 0)
      throw new Error(`storage format failed: ${format.stderr}${format.stdout}`);
    const log = openSync(join(dir, 'broker.log'), 'a');
    broker = spawn('java', ['-Xmx256m', '-cp', cp, 'kafka.Kafka', properties], {
      stdio: ['ignore', log, log],
    });
    const deadline = Date.now() + 90_000;
    while (!(await canConnect(port))) {
      if (Date.now() > deadline || broker.exitCode !== null)
        throw new Error(`SASL broker did not start; see ${join(dir, 'broker.log')}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  });

  afterAll(async () => {
    if (broker && broker.exitCode === null) {
      const exited = new Promise((r) => broker!.once('exit', r));
      broker.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('produces and consumes with KAFKA_SASL_* from the environment', async () => {
    const config = envFor(brokers, {
      KAFKA_SASL_MECHANISM: 'plain',
      KAFKA_SASL_USERNAME: USER,
      KAFKA_SASL_PASSWORD: PASSWORD,
    });
    const kafka = kafkaClient(config, 'sasl-test', silentLogger, {
      retry: { retries: 10, initialRetryTime: 300 },
    });
    const topic = `sasl-${randomUUID()}`;
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1 }] });
    await admin.disconnect();
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: [{ key: 'a', value: 'hello over SASL' }] });
    await producer.disconnect();

    const consumer = kafka.consumer({ groupId: `sasl-${randomUUID()}` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const received = await new Promise<string>((resolve) => {
      void consumer.run({ eachMessage: async ({ message }) => resolve(String(message.value)) });
    });
    await consumer.disconnect();
    expect(received).toBe('hello over SASL');
  });

  it('is refused with a wrong password, and with no SASL at all', async () => {
    const wrong = kafkaClient(
      envFor(brokers, {
        KAFKA_SASL_MECHANISM: 'plain',
        KAFKA_SASL_USERNAME: USER,
        KAFKA_SASL_PASSWORD: 'not-the-password',
      }),
      'sasl-test',
      silentLogger,
      { retry: { retries: 0 } },
    );
    const producer = wrong.producer();
    await expect(producer.connect()).rejects.toThrow(/SASL|[Aa]uthentication/);

    const plain = kafkaClient(envFor(brokers, {}), 'sasl-test', silentLogger, {
      retry: { retries: 0 },
      requestTimeout: 3_000,
    });
    // The broker answers ApiVersions before authentication, then drops the connection
    // at the first real request of a client that did not authenticate.
    const admin = plain.admin();
    try {
      await admin.connect();
      await expect(admin.listTopics()).rejects.toThrow();
    } finally {
      await admin.disconnect();
    }
  });

  it('names the missing variables when the SASL settings are incomplete', () => {
    expect(() =>
      kafkaSecurity(
        envFor(brokers, { KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: USER }),
      ),
    ).toThrow(
      'KAFKA_SASL_MECHANISM=scram-sha-512 needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD',
    );
    expect(() => kafkaSecurity(envFor(brokers, { KAFKA_SASL_PASSWORD: 'x' }))).toThrow(
      /KAFKA_SASL_MECHANISM is not/,
    );
    expect(kafkaSecurity(envFor(brokers, { KAFKA_SSL: 'true' }))).toEqual({ ssl: true });
    expect(() => envFor(brokers, { KAFKA_SASL_MECHANISM: 'kerberos' })).toThrow(
      /KAFKA_SASL_MECHANISM/,
    );
  });
});
