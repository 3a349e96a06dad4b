import pg from 'pg';
import { kafkaClient, relayProducer } from '../env/kafka.ts';
import { serveWorker, workerSpec } from '../env/worker.ts';
import { oursPublisher, type OursOptions } from './ours.ts';
import { peerPublisher } from './peer.ts';
import type { Publisher, PublisherDeps } from './publisher.ts';
import { seedBatchPublisher } from './seed-batch.ts';
import { seedRowPublisher } from './seed-row.ts';
import { PhaseTrace } from './trace.ts';

/** One publisher replica in a process of its own; `go` starts its loop. */
export interface PublisherSpec {
  kind: 'seed-row' | 'seed-batch' | 'peer' | 'ours';
  databaseUrl: string;
  schema: string;
  brokers: string[];
  topic: string;
  ours?: OursOptions;
  /** Report where the wall time went (--trace). */
  trace?: boolean;
}

const spec = workerSpec<PublisherSpec>();
const pgConfig: pg.ClientConfig = {
  connectionString: spec.databaseUrl,
  options: `-c search_path=${spec.schema}`,
};
const pool = new pg.Pool({ ...pgConfig, max: 4 });
pool.on('error', () => undefined);
const trace = spec.trace ? new PhaseTrace() : undefined;
trace?.wrapPool(pool);
const kafka = kafkaClient(spec.brokers, `bench-${spec.kind}`);
const producer = relayProducer(kafka);
await producer.connect();
// The first produce fetches metadata and opens the leader connections: do it before
// the clock starts, for every variant alike.
await producer.send({ topic: spec.topic, acks: -1, messages: [{ key: 'warm-up', value: '{}' }] });

trace?.wrapProducer(producer);
const deps: PublisherDeps = { pool, pgConfig, schema: spec.schema, producer, topic: spec.topic };
const publisher: Publisher =
  spec.kind === 'seed-row'
    ? seedRowPublisher(deps)
    : spec.kind === 'seed-batch'
      ? seedBatchPublisher(deps)
      : spec.kind === 'peer'
        ? peerPublisher(deps)
        : oursPublisher(deps, spec.ours ?? { sharded: true, listen: true });

serveWorker({ go: () => publisher.start() }, async () => {
  await publisher.stop();
  if (trace) process.stderr.write(`${trace.report(spec.kind)}\n`);
  await producer.disconnect();
  await pool.end();
});
