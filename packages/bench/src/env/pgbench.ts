import { spawnSync } from 'node:child_process';

/**
 * pgbench comes with Debian's postgresql-client. CI starts from a fresh machine, so the
 * benchmark installs it when it is missing and it may (root, apt-get present).
 */
export function ensurePgbench(progress: (line: string) => void): void {
  if (spawnSync('pgbench', ['--version']).status === 0) return;
  const root = process.getuid?.() === 0;
  if (!root || spawnSync('apt-get', ['--version']).status !== 0) {
    throw new Error('pgbench is not installed (apt-get install -y postgresql-client)');
  }
  progress('pgbench missing: apt-get install -y postgresql-client');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', 'postgresql-client']]) {
    const r = spawnSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (${r.status})`);
  }
  if (spawnSync('pgbench', ['--version']).status !== 0) {
    throw new Error('pgbench still missing after installing postgresql-client');
  }
}

const OUTBOX_INSERT = `INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers)
  VALUES ('order', :uid, 'OrderCreated', '{"orderId":"0f0e7c8a-3f7b-4a55-9a2c-6a1c2b3d4e5f","userId":42,"sku":"sku-1","quantity":1,"seq":1,"source":"api"}', '{"correlationId":"c"}')`;

const orderOutboxScript = (outbox: string) => `\\set uid random(1, 1000000)
BEGIN;
INSERT INTO bench_orders (user_id, sku, quantity) VALUES (:uid, 'sku-1', 1);
${outbox};
END;
`;

/** The order + outbox transaction, as pgbench runs it (the wake-up and wal scenarios). */
export const ORDER_OUTBOX_SCRIPT = orderOutboxScript(OUTBOX_INSERT);

/**
 * The same transaction the way Debezium's documentation suggests for CDC: the event row
 * is deleted again before COMMIT. The WAL holds its INSERT (which the connector
 * publishes; the router ignores the DELETE), the table stays empty, and no cleanup job
 * runs, at the price of the delete in every writer's transaction.
 */
export const ORDER_OUTBOX_DELETE_SCRIPT = orderOutboxScript(
  `${OUTBOX_INSERT} RETURNING id AS outbox_id \\gset
DELETE FROM outbox WHERE id = :outbox_id`,
);

/** One pgbench run of `script` in `schema`: transactions per second and how many ran. */
export function runPgbench(
  databaseUrl: string,
  schema: string,
  script: string,
  seconds: number,
  clients: number,
): { tps: number; transactions: number } {
  const result = spawnSync(
    'pgbench',
    ['-n', '-c', String(clients), '-j', '2', '-T', String(seconds), '-f', script, databaseUrl],
    { encoding: 'utf8', env: { ...process.env, PGOPTIONS: `-c search_path=${schema}` } },
  );
  const tps = /tps = ([\d.]+)/.exec(result.stdout);
  const done = /number of transactions actually processed: (\d+)/.exec(result.stdout);
  if (result.status !== 0 || !tps || !done)
    throw new Error(`pgbench failed (${result.status}): ${result.stderr || result.stdout}`);
  return { tps: Number(tps[1]), transactions: Number(done[1]) };
}
