import { spawn } from 'node:child_process';
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { logLevel } from 'kafkajs';
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type pg from 'pg';
import { createPool, pgConfig, silentLogger } from '@outbox/core';
import {
  baseConfigSchema,
  closeServer,
  createOpsServer,
  ensureTopic,
  ensureTopics,
  kafkaClient,
  listenOrExit,
  parseConfig,
} from '../src/index.ts';

const labIndex = fileURLToPath(new URL('../src/index.ts', import.meta.url));

interface Child {
  messages: string[];
  exited: Promise<number | null>;
  signal(name: NodeJS.Signals): void;
  waitFor(msg: string): Promise<void>;
}

/**
 * Runs `body` as a real process (node + tsx) with `onShutdown`, `exitOnStartupSignal`
 * and `log` in scope, so the signals, the ordering and the exit codes are the real ones.
 */
function runScript(body: string): Child {
  const code = `
    const { createLogger } = await import('@outbox/core');
    const { onShutdown, exitOnStartupSignal } = await import(${JSON.stringify(labIndex)});
    const log = createLogger('service-test');
    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    ${body}
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const messages: string[] = [];
  let buffered = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) messages.push((JSON.parse(line) as { msg: string }).msg);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  return {
    messages,
    exited,
    signal: (name) => child.kill(name),
    async waitFor(msg) {
      const deadline = Date.now() + 60_000;
      while (!messages.includes(msg)) {
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`no "${msg}" line; got ${JSON.stringify(messages)} ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

const plan = (steps: string) => `
  onShutdown(log, {
    message: 'stopping',
    timeoutMs: 60_000,
    timeoutMessage: 'too slow',
    steps: ${steps},
  });
  // A service's open sockets keep it alive until it exits; an interval stands in.
  setInterval(() => undefined, 1_000);
  log.info('ready');
`;

describe('onShutdown', () => {
  it('runs the steps in order, each after the previous one finished, then exits 0', async () => {
    const child = runScript(
      plan(`[
        async () => { await sleep(200); log.info('first'); },
        () => log.info('second'),
        async () => { await sleep(50); log.info('third'); },
      ]`),
    );
    await child.waitFor('ready');
    child.signal('SIGTERM');
    expect(await child.exited).toBe(0);
    expect(child.messages).toEqual(['ready', 'stopping', 'first', 'second', 'third', 'stopped']);
  });

  it('exits 1 at once on a second signal while a step hangs', async () => {
    const child = runScript(plan(`[() => new Promise(() => {})]`));
    await child.waitFor('ready');
    child.signal('SIGINT');
    await child.waitFor('stopping');
    child.signal('SIGTERM');
    expect(await child.exited).toBe(1);
    expect(child.messages).toEqual(['ready', 'stopping', 'second signal: exiting now']);
  });

  it('exits 1 when a step fails, without running the later steps', async () => {
    const child = runScript(plan(`[() => { throw new Error('boom'); }, () => log.info('never')]`));
    await child.waitFor('ready');
    child.signal('SIGTERM');
    expect(await child.exited).toBe(1);
    expect(child.messages).toEqual(['ready', 'stopping', 'shutdown failed']);
  });

  it('exits 0 on a signal during start-up, and hands over to onShutdown once disarmed', async () => {
    const early = runScript(`exitOnStartupSignal(log); log.info('ready'); await sleep(600_000);`);
    await early.waitFor('ready');
    early.signal('SIGTERM');
    expect(await early.exited).toBe(0);
    expect(early.messages).toEqual(['ready', 'signal during start-up: exiting']);

    const late = runScript(`const disarm = exitOnStartupSignal(log); disarm(); ${plan(`[]`)}`);
    await late.waitFor('ready');
    late.signal('SIGTERM');
    expect(await late.exited).toBe(0);
    expect(late.messages).toEqual(['ready', 'stopping', 'stopped']);
  });
});

describe('createOpsServer', () => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await closeServer(server, 'all');
    server = undefined;
  });

  it('answers /healthz from the health callback and /metrics from the registry over HTTP', async () => {
    const registry = new Registry();
    const counter = new Counter({
      name: 'service_test_total',
      help: 'counted',
      registers: [registry],
    });
    counter.inc(3);
    let ok = true;
    const ops = createOpsServer(registry, () => ({ ok, role: 'test' }));
    server = ops;
    const port = await new Promise<number>((resolve) =>
      listenOrExit(ops, { host: '127.0.0.1', port: 0 }, silentLogger, resolve),
    );
    const base = `http://127.0.0.1:${port}`;

    const healthy = await fetch(`${base}/healthz?probe=1`);
    expect(healthy.status).toBe(200);
    expect(await healthy.json()).toEqual({ ok: true, role: 'test' });

    ok = false;
    const stopping = await fetch(`${base}/healthz`);
    expect(stopping.status).toBe(503);
    expect(await stopping.json()).toEqual({ ok: false, role: 'test' });

    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toBe(registry.contentType);
    expect(await metrics.text()).toContain('service_test_total 3');

    const missing = await fetch(`${base}/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'not found' });
    const post = await fetch(`${base}/healthz`, { method: 'POST' });
    expect(post.status).toBe(404);
  });
});

describe('createPool', () => {
  it('connects with the schema first on the search_path', async () => {
    const pool = createPool(
      { DATABASE_URL: inject('databaseUrl'), DATABASE_SCHEMA: 'service_pool_test' },
      silentLogger,
      { max: 1, watchCheckedOut: true },
    );
    try {
      const { rows } = await pool.query<{ search_path: string }>('SHOW search_path');
      expect(rows[0]?.search_path).toBe('service_pool_test');
      expect(pool.listenerCount('error')).toBe(1);
      expect(pool.listenerCount('connect')).toBe(1);
    } finally {
      await pool.end();
    }
  });
});

describe('createPool: the session limits of a service (a silent link must not pin locks)', () => {
  const env = (extra: Record<string, string> = {}) =>
    parseConfig(baseConfigSchema, {
      DATABASE_URL: inject('databaseUrl'),
      DATABASE_SCHEMA: 'service_pool_test',
      KAFKA_BROKERS: 'unused:9092',
      ...extra,
    });
  const show = async (pool: pg.Pool) => {
    const { rows } = await pool.query<Record<string, string>>(
      `SELECT current_setting('idle_in_transaction_session_timeout') AS idle,
              current_setting('statement_timeout') AS statement,
              current_setting('lock_timeout') AS lock,
              current_setting('tcp_keepalives_idle') AS keepalive_idle`,
    );
    return rows[0];
  };

  it('sets the defaults on the server, per session', async () => {
    const pool = createPool(env(), silentLogger, { max: 1 });
    try {
      // keepalive_idle reads 0 on a Unix socket; the dev-stack connects over TCP.
      expect(await show(pool)).toEqual({
        idle: '15s',
        statement: '30s',
        lock: '10s',
        keepalive_idle: '10',
      });
    } finally {
      await pool.end();
    }
  });

  it('takes each limit from the environment; 0 leaves the server default', async () => {
    const pool = createPool(
      env({
        DATABASE_STATEMENT_TIMEOUT_MS: '50',
        DATABASE_LOCK_TIMEOUT_MS: '0',
        DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '0',
        DATABASE_KEEPALIVE_MS: '0',
      }),
      silentLogger,
      { max: 1 },
    );
    try {
      expect(await show(pool)).toMatchObject({ idle: '0', statement: '50ms', lock: '0' });
      await expect(pool.query('SELECT pg_sleep(1)')).rejects.toMatchObject({ code: '57014' });
    } finally {
      await pool.end();
    }
  });

  it('refuses a query timeout that would cut a statement the server still allows', () => {
    expect(() => pgConfig(env({ DATABASE_QUERY_TIMEOUT_MS: '20000' }))).toThrow(
      /DATABASE_QUERY_TIMEOUT_MS \(20000\) must exceed DATABASE_STATEMENT_TIMEOUT_MS \(30000\)/,
    );
    expect(() => env({ DATABASE_LOCK_TIMEOUT_MS: '-1' })).toThrow(/DATABASE_LOCK_TIMEOUT_MS/);
    expect(pgConfig(env({ DATABASE_QUERY_TIMEOUT_MS: '0' })).query_timeout).toBe(0);
  });
});

describe('kafkaClient + ensureTopic', () => {
  it('creates a missing topic with its partitions, and a second call is no error', async () => {
    const kafka = kafkaClient(
      { KAFKA_BROKERS: inject('kafkaBrokers') },
      'service-test',
      silentLogger,
      {
        logLevel: logLevel.NOTHING,
      },
    );
    const topic = `service-test-${process.pid}-${Date.now()}`;
    await ensureTopic(kafka, topic, 2);
    await ensureTopic(kafka, topic, 2);
    const admin = kafka.admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      expect(topics[0]?.partitions).toHaveLength(2);
      await admin.deleteTopics({ topics: [topic] });
    } finally {
      await admin.disconnect();
    }
  });

  it('ensureTopics: several services racing create each topic once as specified; a topic that differs is left and reported', async () => {
    const kafka = kafkaClient(
      { KAFKA_BROKERS: inject('kafkaBrokers') },
      'service-test',
      silentLogger,
      {
        logLevel: logLevel.NOTHING,
      },
    );
    const base = `service-test-${process.pid}-${Date.now()}`;
    const specs = [
      { topic: `${base}.a`, numPartitions: 6 },
      { topic: `${base}.b`, numPartitions: 1 },
    ];
    // Three "services" starting at once, as the demo's do.
    await Promise.all([1, 2, 3].map(() => ensureTopics(kafka, specs)));
    const warnings: Record<string, unknown>[] = [];
    const log = {
      ...silentLogger,
      warn: (fields: Record<string, unknown>) => void warnings.push(fields),
    } as unknown as typeof silentLogger;
    await ensureTopics(kafka, [{ topic: `${base}.a`, numPartitions: 3 }, specs[1]!], log);
    const admin = kafka.admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: specs.map((s) => s.topic) });
      expect(Object.fromEntries(topics.map((t) => [t.name, t.partitions.length]))).toEqual({
        [`${base}.a`]: 6,
        [`${base}.b`]: 1,
      });
      expect(warnings).toEqual([{ topic: `${base}.a`, partitions: 6, expected: 3 }]);
      await admin.deleteTopics({ topics: specs.map((s) => s.topic) });
    } finally {
      await admin.disconnect();
    }
  });
});
