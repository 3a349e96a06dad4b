import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What one Debezium outbox connector captures and where it publishes. */
export interface ConnectorSpec {
  /** Connector name, also the replication slot's and the publication's (`_` for `-`). */
  name: string;
  /** PostgreSQL connection of the captured database. */
  database: { host: string; port: number; user: string; password: string; dbname: string };
  /** Schema whose `outbox` table is captured. */
  schema: string;
  /** The topic every outbox row goes to. */
  topic: string;
  /** How often the connector polls its queue of decoded changes (ms). */
  pollIntervalMs: number;
}

/**
 * The table the connector's heartbeats write to (beside the outbox, in the same
 * publication): without it the slot cannot be confirmed past the last outbox commit.
 */
export const HEARTBEAT_TABLE = 'outbox_cdc_heartbeat';

/** The slot and the publication of a connector (PostgreSQL names: no dashes). */
export function slotName(spec: Pick<ConnectorSpec, 'name'>): string {
  return spec.name.replace(/-/g, '_');
}

/**
 * Worker (standalone) properties. Offsets in a file next to the slot they belong to:
 * both are dropped together, because a kept offsets file with a recreated slot can
 * skip rows. Offsets are flushed every second: a SIGKILL re-sends at most what
 * followed the last flush (the inbox catches it).
 */
export function workerProperties(o: {
  brokers: string[];
  restPort: number;
  offsetsFile: string;
  pluginsDir: string;
}): string {
  return lines({
    'bootstrap.servers': o.brokers.join(','),
    'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'offset.storage.file.filename': o.offsetsFile,
    'offset.flush.interval.ms': '1000',
    'plugin.path': o.pluginsDir,
    // Both plugins declare themselves in META-INF/services: no classpath scan.
    'plugin.discovery': 'service_load',
    listeners: `http://127.0.0.1:${o.restPort}`,
    // acks = all and idempotence, as the polling relay produces.
    'producer.acks': 'all',
    'producer.enable.idempotence': 'true',
  });
}

/**
 * The Debezium PostgreSQL connector with the Outbox Event Router, configured so that
 * the consumer receives the very message the polling relay sends: key = aggregate_id,
 * value = the payload's JSON, headers event_id, event_type, event_version,
 * aggregate_type, aggregate_id and one header per key of the row's `headers` (our
 * ExpandJsonHeader), nothing else (the router's own `id` header is dropped).
 */
export function connectorProperties(spec: ConnectorSpec): string {
  const slot = slotName(spec);
  const beats = `${spec.schema}.${HEARTBEAT_TABLE}`;
  return lines({
    name: spec.name,
    'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
    'tasks.max': '1',
    'database.hostname': spec.database.host,
    'database.port': String(spec.database.port),
    'database.user': spec.database.user,
    'database.password': spec.database.password,
    'database.dbname': spec.database.dbname,
    'topic.prefix': spec.name,
    'plugin.name': 'pgoutput',
    'slot.name': slot,
    // The publication is ours (created with publish = 'insert'): the relay's UPDATEs and
    // cleanup's DELETEs never reach the connector.
    'publication.name': slot,
    'publication.autocreate.mode': 'disabled',
    'table.include.list': `${spec.schema}.outbox,${beats}`,
    // Only what is appended after the slot exists: the rows before it are the polling
    // relay's (a snapshot would publish the whole outbox again).
    'snapshot.mode': 'no_data',
    'tombstones.on.delete': 'false',
    // Measured here: commit → consumer p50 538 ms at the 500 ms default, 62 ms at 50.
    'poll.interval.ms': String(spec.pollIntervalMs),
    'extended.headers.enabled': 'false',
    // Debezium confirms the slot only up to the last commit it captured: without
    // heartbeats the slot stayed one transaction behind whenever the outbox fell idle
    // (measured here: confirmed_flush_lsn short of the last append's commit for as long
    // as we watched). Heartbeats alone carried a fresh connector past it within 3 s, but
    // after a restart from saved offsets every heartbeat offset kept the last captured
    // commit (60 s watched). So each heartbeat also writes a row of its own table,
    // captured like the outbox: a commit to confirm even when the outbox is idle. The
    // table is in the publication (publish = 'insert'), hence DELETE then INSERT, not
    // an upsert; its records are filtered out before the router (offsets still commit).
    'heartbeat.interval.ms': '1000',
    'heartbeat.action.query': `WITH gone AS (DELETE FROM ${beats}) INSERT INTO ${beats} (beat_at) VALUES (now())`,
    predicates: 'heartbeatTable',
    'predicates.heartbeatTable.type':
      'org.apache.kafka.connect.transforms.predicates.TopicNameMatches',
    // [.] rather than \. : a properties file reads a backslash as an escape.
    'predicates.heartbeatTable.pattern': `${spec.name}[.]${spec.schema}[.]${HEARTBEAT_TABLE}`,
    'transforms.beats.type': 'org.apache.kafka.connect.transforms.Filter',
    'transforms.beats.predicate': 'heartbeatTable',
    transforms: 'beats,outbox,headers,dropid',
    'transforms.outbox.type': 'io.debezium.transforms.outbox.EventRouter',
    'transforms.outbox.table.field.event.id': 'id',
    'transforms.outbox.table.field.event.key': 'aggregate_id',
    'transforms.outbox.table.field.event.payload': 'payload',
    'transforms.outbox.route.by.field': 'aggregate_type',
    'transforms.outbox.route.topic.replacement': spec.topic,
    'transforms.outbox.table.fields.additional.placement': [
      'id:header:event_id',
      'event_type:header:event_type',
      'event_version:header:event_version',
      'aggregate_type:header:aggregate_type',
      'aggregate_id:header:aggregate_id',
      'headers:header:headers',
    ].join(','),
    'transforms.headers.type': 'lab.outbox.connect.ExpandJsonHeader',
    'transforms.headers.header': 'headers',
    'transforms.dropid.type': 'org.apache.kafka.connect.transforms.DropHeaders',
    'transforms.dropid.headers': 'id',
  });
}

export const LOG4J2_PROPERTIES = lines({
  status: 'warn',
  'appender.console.type': 'Console',
  'appender.console.name': 'STDOUT',
  'appender.console.layout.type': 'PatternLayout',
  'appender.console.layout.pattern': '[%d] %p %m (%c)%n',
  'rootLogger.level': 'INFO',
  'rootLogger.appenderRef.stdout.ref': 'STDOUT',
});

export async function writeConnectFiles(
  dir: string,
  files: Record<string, string>,
): Promise<Record<string, string>> {
  const written: Record<string, string> = {};
  for (const [name, body] of Object.entries(files)) {
    written[name] = join(dir, name);
    await writeFile(written[name], body);
  }
  return written;
}

function lines(props: Record<string, string>): string {
  // Properties files treat backslashes as escapes; none of our values has one.
  return `${Object.entries(props)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n')}\n`;
}
