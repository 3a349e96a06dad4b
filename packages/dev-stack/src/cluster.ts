import { execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { ensureKafkaJars, runLogged } from './kafka-jars.ts';
import { assertKafkaTools } from './kafka-tools.ts';
import { resolveContext, type StackContext } from './options.ts';
import { findRepoRoot } from './paths.ts';
import { isPortOpen, pickPort } from './ports.ts';
import { isPidAlive, terminate } from './process.ts';
import { waitFor } from './wait.ts';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** Where the nodes keep their logs and data (default `<repo>/.data/cluster`). */
  dataDir?: string;
  /** Jar cache (default the single broker's, `<repo>/.data/kafka/libs`: no second Maven run). */
  kafkaLibsDir?: string;
  /** Number of nodes, each broker and controller (default 3). */
  nodes?: number;
  /** Heap of each node's JVM (default 384 MB: three of them on a small machine). */
  heapMb?: number;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

/** One KRaft node of the cluster. */
export interface ClusterNode {
  id: number;
  port: number;
  controllerPort: number;
  pid: number | null;
  broker: string;
}

interface ClusterState {
  clusterId: string;
  nodes: { id: number; port: number; controllerPort: number; pid: number | null }[];
}

/**
 * A local multi-node Kafka: every node is broker and controller (KRaft quorum of all of
 * them), topics default to replication factor = nodes with min.insync.replicas =
 * nodes − 1, so a producer with acks = all keeps writing with one node down and never
 * loses an acknowledged message when one dies. Its own ports and data dir: it never
 * touches the single broker of the dev-stack.
 */
export class KafkaCluster {
  private readonly paused = new Set<number>();

  constructor(
    private readonly ctx: StackContext,
    private readonly dir: string,
    private readonly heapMb: number,
    private state: ClusterState,
  ) {}

  /** Bootstrap addresses of every node. */
  get brokers(): string[] {
    return this.state.nodes.map((n) => `127.0.0.1:${n.port}`);
  }

  get nodes(): ClusterNode[] {
    return this.state.nodes.map((n) => ({ ...n, broker: `127.0.0.1:${n.port}` }));
  }

  /** Kills one node: SIGKILL by default (a crash), SIGTERM for a controlled shutdown. */
  async kill(id: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const node = this.node(id);
    if (isPidAlive(node.pid)) {
      await terminate(node.pid, { signal, group: true, timeoutMs: 30_000 });
    }
    node.pid = null;
    this.paused.delete(id);
    await this.save();
    this.ctx.log(`cluster: node ${id} stopped (${signal})`);
  }

  /**
   * Freezes one node (SIGSTOP to its process group): it answers nothing, copies
   * nothing, and as a controller it no longer votes; its sockets stay open, so peers
   * and clients see silence, not a refusal. `resume` wakes it.
   */
  pause(id: number): void {
    const node = this.node(id);
    if (!isPidAlive(node.pid)) throw new Error(`cluster node ${id} is not running`);
    process.kill(-node.pid, 'SIGSTOP');
    this.paused.add(id);
    this.ctx.log(`cluster: node ${id} paused (SIGSTOP)`);
  }

  /** Wakes a paused node (SIGCONT). A node that is not paused is left alone. */
  resume(id: number): void {
    const node = this.node(id);
    if (!this.paused.delete(id)) return;
    if (isPidAlive(node.pid)) process.kill(-node.pid, 'SIGCONT');
    this.ctx.log(`cluster: node ${id} resumed (SIGCONT)`);
  }

  /** Whether the node's process runs (paused counts as running). */
  isRunning(id: number): boolean {
    return isPidAlive(this.node(id).pid);
  }

  isPaused(id: number): boolean {
    return this.paused.has(id);
  }

  /**
   * Makes node `id` the leader of every partition of `topic`: each replica list is
   * reordered with it first (the same replicas, no data moves) and a preferred-leader
   * election runs (java/LeadAll.java on the broker's jars: kafkajs has no ElectLeaders).
   */
  async leadAll(topic: string, id: number): Promise<void> {
    const node = this.node(id);
    const classes = await this.compileTools();
    await new Promise<void>((resolve, reject) => {
      execFile(
        'java',
        [
          '-cp',
          `${this.ctx.paths.kafkaLibsDir}/*:${classes}`,
          'LeadAll',
          this.brokers.join(','),
          topic,
          String(node.id),
        ],
        { env: this.ctx.env, timeout: 90_000 },
        (error, _stdout, stderr) =>
          error
            ? reject(
                new Error(
                  `LeadAll ${topic} → node ${id} failed: ${stderr.trim().split('\n').slice(-3).join(' ') || error.message}`,
                ),
              )
            : resolve(),
      );
    });
    this.ctx.log(`cluster: node ${id} leads every partition of ${topic}`);
  }

  /**
   * java/*.java compiled once into the cluster's dir (again when a source is newer):
   * the JVM's single-file launcher would compile on every call, seconds each on a busy
   * machine.
   */
  private async compileTools(): Promise<string> {
    const out = join(this.dir, 'tools');
    const source = join(packageDir, 'java', 'LeadAll.java');
    const compiled = join(out, 'LeadAll.class');
    if (existsSync(compiled) && statSync(compiled).mtimeMs >= statSync(source).mtimeMs) return out;
    await mkdir(out, { recursive: true });
    await new Promise<void>((resolve, reject) => {
      execFile(
        'javac',
        ['-cp', `${this.ctx.paths.kafkaLibsDir}/*`, '-d', out, source],
        { env: this.ctx.env, timeout: 120_000 },
        (error, _stdout, stderr) =>
          error
            ? reject(new Error(`javac ${source} failed: ${stderr.trim() || error.message}`))
            : resolve(),
      );
    });
    return out;
  }

  /** Starts one node again (after kill) and waits until it listens. */
  async start(id: number): Promise<void> {
    const node = this.node(id);
    if (isPidAlive(node.pid)) return;
    node.pid = this.spawnNode(node.id);
    await this.save();
    const pid = node.pid;
    await waitFor(() => isPortOpen(node.port), {
      what: `cluster node ${id}`,
      timeoutMs: 90_000,
      intervalMs: 500,
      hint: `see ${this.logFile(id)}`,
      abort: () => (isPidAlive(pid) ? undefined : 'the node exited during start-up'),
    });
    this.ctx.log(`cluster: node ${id} started (pid ${pid})`);
  }

  /** Waits until every node is in the metadata and a replicated topic has all its replicas in sync. */
  async waitHealthy(timeoutMs = 120_000): Promise<void> {
    const kafka = new Kafka({
      clientId: 'dev-stack-cluster-probe',
      brokers: this.brokers,
      logLevel: logLevel.NOTHING,
      connectionTimeout: 2_000,
      requestTimeout: 5_000,
      retry: { retries: 1, initialRetryTime: 200 },
    });
    const probe = '__dev_stack_cluster_probe';
    await waitFor(
      async () => {
        const admin = kafka.admin();
        await admin.connect();
        try {
          const { brokers } = await admin.describeCluster();
          if (brokers.length < this.state.nodes.length) return false;
          if (!(await admin.listTopics()).includes(probe)) {
            await admin.createTopics({
              waitForLeaders: true,
              topics: [
                { topic: probe, numPartitions: 1, replicationFactor: this.state.nodes.length },
              ],
            });
          }
          const { topics } = await admin.fetchTopicMetadata({ topics: [probe] });
          const partitions = topics[0]?.partitions ?? [];
          if (!partitions.every((p) => p.isr.length === this.state.nodes.length)) return false;
          await admin.describeGroups(['dev-stack-cluster-probe']);
          return true;
        } finally {
          await admin.disconnect().catch(() => undefined);
        }
      },
      {
        what: 'the Kafka cluster',
        timeoutMs,
        intervalMs: 1_000,
        hint: `see ${join(this.dir, 'logs')}`,
      },
    );
  }

  /** Stops every node (controlled shutdown, SIGKILL after the timeout). Safe to call twice. */
  async stop(): Promise<void> {
    // A paused node would sleep through its SIGTERM.
    for (const id of [...this.paused]) this.resume(id);
    await Promise.all(
      this.state.nodes.map(async (node) => {
        if (isPidAlive(node.pid)) {
          await terminate(node.pid, { signal: 'SIGTERM', group: true, timeoutMs: 20_000 });
        }
        node.pid = null;
      }),
    );
    await this.save();
    this.ctx.log('cluster: stopped');
  }

  private node(id: number): ClusterState['nodes'][number] {
    const node = this.state.nodes.find((n) => n.id === id);
    if (!node) throw new Error(`no cluster node ${id}`);
    return node;
  }

  private logFile(id: number): string {
    return join(this.dir, 'logs', `node-${id}.log`);
  }

  spawnNode(id: number): number {
    const fd = openSync(this.logFile(id), 'a');
    try {
      const child = spawn(
        'java',
        [
          `-Xmx${this.heapMb}m`,
          `-Xms${Math.min(128, this.heapMb)}m`,
          `-Dlog4j2.configurationFile=${join(this.dir, 'log4j2.yaml')}`,
          '-cp',
          `${this.ctx.paths.kafkaLibsDir}/*`,
          'kafka.Kafka',
          join(this.dir, `node-${id}`, 'server.properties'),
        ],
        { detached: true, stdio: ['ignore', fd, fd], env: this.ctx.env },
      );
      child.unref();
      if (!child.pid) throw new Error('could not spawn java');
      return child.pid;
    } finally {
      closeSync(fd);
    }
  }

  async save(): Promise<void> {
    await writeFile(join(this.dir, 'cluster.json'), `${JSON.stringify(this.state, null, 2)}\n`);
  }
}

function nodeProperties(
  dir: string,
  state: ClusterState,
  node: ClusterState['nodes'][number],
): string {
  const n = state.nodes.length;
  const voters = state.nodes.map((v) => `${v.id}@127.0.0.1:${v.controllerPort}`).join(',');
  return [
    'process.roles=broker,controller',
    `node.id=${node.id}`,
    `controller.quorum.voters=${voters}`,
    `listeners=PLAINTEXT://127.0.0.1:${node.port},CONTROLLER://127.0.0.1:${node.controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${node.port}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${join(dir, `node-${node.id}`, 'data')}`,
    'num.partitions=6',
    // Every partition on every node; a write with acks = all needs n − 1 of them.
    `default.replication.factor=${n}`,
    `min.insync.replicas=${Math.max(1, n - 1)}`,
    `offsets.topic.replication.factor=${n}`,
    'offsets.topic.num.partitions=6',
    `transaction.state.log.replication.factor=${n}`,
    `transaction.state.log.min.isr=${Math.max(1, n - 1)}`,
    'transaction.state.log.num.partitions=6',
    // Never elect a replica that missed acknowledged writes.
    'unclean.leader.election.enable=false',
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=true',
    // A dead node leaves the ISR after 10 s (the default 30 s makes acks = all wait longer).
    'replica.lag.time.max.ms=10000',
  ].join('\n');
}

function javaOutput(ctx: StackContext, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'java',
      ['-cp', `${ctx.paths.kafkaLibsDir}/*`, ...args],
      { env: ctx.env },
      (err, stdout) => (err ? reject(err) : resolve(stdout.trim().split('\n').pop() ?? '')),
    );
  });
}

/**
 * Starts (or reuses) a local KRaft cluster of `nodes` brokers (default 3) in its own
 * data dir with its own ports, and waits until every node serves and replicates.
 * Ports and the cluster id are kept in `<dataDir>/cluster.json` and reused.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<KafkaCluster> {
  const root = findRepoRoot();
  const dir = options.dataDir ?? join(root, '.data', 'cluster');
  const ctx = resolveContext({
    dataDir: dir,
    kafkaLibsDir: options.kafkaLibsDir ?? join(root, '.data', 'kafka', 'libs'),
    ...(options.env ? { env: options.env } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  const count = options.nodes ?? 3;
  assertKafkaTools(ctx.env);
  await mkdir(join(dir, 'logs'), { recursive: true });
  await ensureKafkaJars(ctx);

  const stateFile = join(dir, 'cluster.json');
  let state: ClusterState | undefined;
  if (existsSync(stateFile)) {
    state = JSON.parse(await readFile(stateFile, 'utf8')) as ClusterState;
    if (state.nodes.length !== count)
      throw new Error(`${dir} holds a ${state.nodes.length}-node cluster`);
  }
  if (!state) {
    const clusterId = await javaOutput(ctx, ['kafka.tools.StorageTool', 'random-uuid']);
    state = { clusterId, nodes: [] };
    const taken: number[] = [];
    for (let id = 1; id <= count; id += 1) {
      const port = await pickPort(undefined, taken);
      taken.push(port);
      const controllerPort = await pickPort(undefined, taken);
      taken.push(controllerPort);
      state.nodes.push({ id, port, controllerPort, pid: null });
    }
  }
  const cluster = new KafkaCluster(ctx, dir, options.heapMb ?? 384, state);
  await writeFile(
    join(dir, 'log4j2.yaml'),
    [
      'Configuration:',
      '  Appenders:',
      '    Console:',
      '      name: STDOUT',
      '      PatternLayout:',
      '        pattern: "[%d] %p %m (%c)%n"',
      '  Loggers:',
      '    Root:',
      '      level: WARN',
      '      AppenderRef:',
      '        - ref: STDOUT',
      '',
    ].join('\n'),
  );
  for (const node of state.nodes) {
    const nodeDir = join(dir, `node-${node.id}`);
    await mkdir(join(nodeDir, 'data'), { recursive: true });
    const props = join(nodeDir, 'server.properties');
    await writeFile(props, `${nodeProperties(dir, state, node)}\n`);
    if (!existsSync(join(nodeDir, 'data', 'meta.properties'))) {
      const code = await runLogged(
        'java',
        [
          '-cp',
          `${ctx.paths.kafkaLibsDir}/*`,
          'kafka.tools.StorageTool',
          'format',
          '-t',
          state.clusterId,
          '-c',
          props,
        ],
        join(dir, 'logs', `node-${node.id}.log`),
        ctx.env,
      );
      if (code !== 0) throw new Error(`formatting cluster node ${node.id} failed (exit ${code})`);
    }
  }
  await cluster.save();
  ctx.log(`cluster: starting ${count} nodes at ${cluster.brokers.join(',')}`);
  for (const node of state.nodes) {
    // A recorded pid only counts if that process still serves the node's port.
    const running = isPidAlive(node.pid) && (await isPortOpen(node.port));
    if (!running) node.pid = cluster.spawnNode(node.id);
  }
  await cluster.save();
  await cluster.waitHealthy();
  ctx.log(`cluster: ${count} nodes up at ${cluster.brokers.join(',')}`);
  return cluster;
}
