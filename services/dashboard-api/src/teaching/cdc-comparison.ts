/**
 * The seed's table "Outbox + Worker vs Debezium CDC", with what this repository
 * measured beside each claim. The figures are a benchmark run's, not live: they come
 * from `npm run bench -- --only latency,drain,wal --variant ours,cdc,ours-1-sharded`
 * (2 cores, 2026-12-04; docs/guide.md has the whole table and its caveats). Re-run it
 * and update both when the relay or the connector's settings change.
 */
export interface CdcComparisonRow {
  aspect: string;
  worker: string;
  cdc: string;
  measured: string;
}

export const CDC_COMPARISON_SOURCE =
  'npm run bench -- --only latency,drain,wal --variant ours,cdc,ours-1-sharded (2 cores, 2026-12-04, medians of 3 alternating rounds)';

export const CDC_COMPARISON: readonly CdcComparisonRow[] = [
  {
    aspect: 'Code',
    worker: 'Yours + a migration',
    cdc: 'Debezium config',
    measured:
      '37 connector properties, a one-class transform for the headers, a heartbeat table, and still a small confirmer if sent_at is to mean anything',
  },
  {
    aspect: 'Flexibility of events',
    worker: 'Full control of the payload',
    cdc: 'Row → event mapping',
    measured:
      'The same message from both: the outbox row is the event; the router only maps columns',
  },
  {
    aspect: 'Operational load',
    worker: 'Watch a worker',
    cdc: 'A Kafka Connect cluster',
    measured:
      'Relay 23–44% of a core, ~140 MB; Connect 51–72%, 218–349 MB; plus a slot that keeps WAL while Connect is down. wal_level=logical: 97% of replica’s tx/s',
  },
  {
    aspect: 'Latency',
    worker: '100–500 ms',
    cdc: '10–100 ms',
    measured:
      'COMMIT → consumer COMMIT p50: relay 14 ms, CDC 51 ms at 200 ev/s; 40 vs 63 ms at 1,000 ev/s. NOTIFY at COMMIT beats polling the WAL queue every 50 ms',
  },
  {
    aspect: 'Schema of events',
    worker: 'Business-meaningful',
    cdc: 'Reflects the DB',
    measured: 'With the Outbox Event Router, as meaningful as the payload you write',
  },
];
