import { connect } from 'node:net';
import type { Logger } from '@outbox/core';
import { busiestPartition, partitionRates, readPartitions, type PartitionState } from '@outbox/lab';
import type { Admin, Kafka } from 'kafkajs';
import type { KafkaBroker, KafkaView } from '../contract.ts';

export interface KafkaClusterOptions {
  /** A client with short connect and request timeouts (server.ts builds it). */
  kafka: Kafka;
  /** orders.events, with the demo's prefix. */
  topic: string;
  /** How many brokers the demo runs (KAFKA_CLUSTER_NODES: 1 or 3). */
  brokers: number;
  /** How often the metadata is read (default 1 s). */
  intervalMs?: number;
  /** A reading that takes longer is abandoned: unreachable this time (default 2.5 s). */
  timeoutMs?: number;
  log: Logger;
}

/**
 * orders.events' partition leaders, replicas and ISR, the brokers in the metadata, and
 * each partition's messages per second (high-watermark deltas between readings), read
 * with a kafkajs admin in a loop of its own beside the stats tick, like the consumer
 * lag and Prometheus' alerts: a dead or SIGSTOPped broker makes a reading slow or fail,
 * never the tick, which takes the latest view. A reading still running when the next
 * is due is not doubled; one that outlives `timeoutMs` counts as unreachable (the view
 * keeps the last known partitions with `reachable: false`).
 */
export class KafkaClusterMonitor {
  private admin: Admin | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private inFlight: Promise<unknown> | undefined;
  private stopped = false;
  private failures = 0;
  private last: { at: number; partitions: PartitionState[] } | undefined;
  private rates = new Map<number, number>();
  private readonly known = new Map<number, string>();
  private up = new Set<number>();
  /** The brokers in the metadata of the last reading that succeeded. */
  private listed = new Set<number>();
  private minIsr: number | null = null;
  private reachable = false;

  constructor(private readonly options: KafkaClusterOptions) {}

  start(): void {
    this.stopped = false;
    const loop = () => {
      if (this.stopped) return;
      this.running = this.poll().finally(() => {
        if (!this.stopped) this.timer = setTimeout(loop, this.options.intervalMs ?? 1_000);
      });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    const admin = this.admin;
    this.admin = undefined;
    await admin?.disconnect().catch(() => undefined);
  }

  /** Reads once now (bounded by timeoutMs); the loop calls it, tests may too. Never throws. */
  async poll(): Promise<void> {
    if (this.inFlight) {
      // The previous reading still hangs on a broker that does not answer.
      this.reachable = false;
    } else {
      await this.readBounded();
    }
    await this.probe();
  }

  /**
   * Which known brokers are up: in the metadata of the last reading that succeeded AND
   * accepting connections now. Probed on every poll, whether the metadata could be read
   * or not: with a leader killed, readings fail (the admin's broker refuses, the
   * metadata still names the dead leader) until the controller moves on, and the demo
   * starts the broker again 10 s after the kill. Probing only after a good reading, the
   * panel showed the killed broker up throughout (e2e kill-leader in a CI run;
   * kafka-panel.cluster.test.ts reproduces it with two of three nodes down). The
   * controller drops a SIGKILLed broker from the metadata only once its session expires
   * (9 s); its port refuses at once.
   */
  private async probe(): Promise<void> {
    const answering = await Promise.all(
      [...this.known].map(async ([id, address]) => [id, await accepts(address)] as const),
    );
    this.up = new Set(answering.filter(([id, ok]) => ok && this.listed.has(id)).map(([id]) => id));
  }

  /** One metadata reading, abandoned after `timeoutMs`; a failure is logged, never thrown. */
  private async readBounded(): Promise<void> {
    const reading = this.read();
    // Never rejects: the race below handles the reading's error; this one only tells the
    // next poll that the reading still runs. (Derived with finally() alone, it rejected
    // too, unawaited, and "Kill the partition leader" crashed the dashboard.)
    this.inFlight = reading
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.inFlight = undefined;
      });
    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = this.options.timeoutMs ?? 2_500;
    try {
      await Promise.race([
        reading,
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${timeoutMs} ms`)),
            timeoutMs,
          );
        }),
      ]);
      if (this.failures > 0) this.options.log.info('the Kafka metadata answers again');
      this.failures = 0;
      this.reachable = true;
    } catch (error) {
      this.failures += 1;
      this.reachable = false;
      if (this.failures === 1 || this.failures % 60 === 0)
        this.options.log.warn(
          { err: error, failures: this.failures },
          'could not read the Kafka metadata; the dashboard shows the last known',
        );
      // A new admin next time: the old one may hold a connection to a dead broker.
      const admin = this.admin;
      this.admin = undefined;
      void admin?.disconnect().catch(() => undefined);
    } finally {
      clearTimeout(timer);
    }
  }

  private async read(): Promise<void> {
    if (!this.admin) {
      const admin = this.options.kafka.admin();
      await admin.connect();
      this.admin = admin;
    }
    const admin = this.admin;
    const { brokers } = await admin.describeCluster();
    const partitions = await readPartitions(admin, this.options.topic);
    if (this.minIsr === null && partitions.length > 0) {
      const { resources } = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: 2, name: this.options.topic, configNames: ['min.insync.replicas'] }],
      });
      const value = Number(resources[0]?.configEntries[0]?.configValue);
      if (Number.isInteger(value)) this.minIsr = value;
    }
    for (const b of brokers) this.known.set(b.nodeId, `${b.host}:${b.port}`);
    for (const p of partitions)
      for (const r of p.replicas) if (!this.known.has(r)) this.known.set(r, '');
    this.listed = new Set(brokers.map((b) => b.nodeId));
    const now = Date.now();
    if (this.last)
      this.rates = partitionRates(this.last.partitions, partitions, (now - this.last.at) / 1000);
    this.last = { at: now, partitions };
  }

  /** The latest view for the stats tick (no I/O). */
  view(): KafkaView {
    const partitions = this.last?.partitions ?? [];
    const nodes: KafkaBroker[] = [...this.known]
      .sort(([a], [b]) => a - b)
      .map(([id, address]) => ({ id, address, up: this.up.has(id) }));
    return {
      brokers: this.options.brokers,
      topic: this.options.topic,
      replicationFactor: partitions[0]?.replicas.length ?? null,
      minInsyncReplicas: this.minIsr,
      nodes,
      partitions: partitions.map((p) => ({
        partition: p.partition,
        leader: p.leader,
        replicas: p.replicas,
        isr: p.isr,
        messagesPerSecond: Math.round((this.rates.get(p.partition) ?? 0) * 10) / 10,
      })),
      busiestPartition: partitions.length > 0 ? busiestPartition(this.rates, partitions) : null,
      reachable: this.reachable,
    };
  }
}

/** Whether `host:port` accepts a TCP connection within `timeoutMs` (closed at once). */
function accepts(address: string, timeoutMs = 500): Promise<boolean> {
  const at = address.lastIndexOf(':');
  if (at <= 0) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = connect({ host: address.slice(0, at), port: Number(address.slice(at + 1)) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
