import net from 'node:net';
import { once } from 'node:events';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { sleep, waitFor } from '@outbox/testkit';
import { FaultProxy, parseFaultMode, parseRoutes } from '../src/index.ts';

const databaseUrl = inject('databaseUrl');
const proxies: FaultProxy[] = [];
const clients: pg.Client[] = [];

async function proxyTo(url: string): Promise<{ proxy: FaultProxy; url: string }> {
  const target = new URL(url);
  const proxy = await FaultProxy.start({
    target: { host: target.hostname, port: Number(target.port) },
  });
  proxies.push(proxy);
  const via = new URL(url);
  via.port = String(proxy.port);
  return { proxy, url: via.toString() };
}

async function connect(url: string, extra: pg.ClientConfig = {}): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, ...extra });
  client.on('error', () => undefined);
  clients.push(client);
  await client.connect();
  return client;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.end().catch(() => undefined)));
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});

describe('FaultProxy in front of the real PostgreSQL', () => {
  let direct: pg.Client;
  beforeAll(async () => {
    direct = new pg.Client({ connectionString: databaseUrl });
    await direct.connect();
    await direct.query('CREATE TABLE IF NOT EXISTS fault_proxy_probe (id int PRIMARY KEY)');
  });
  afterAll(async () => {
    await direct.query('DROP TABLE IF EXISTS fault_proxy_probe');
    await direct.end();
  });

  it('passes queries through', async () => {
    const { proxy, url } = await proxyTo(databaseUrl);
    const client = await connect(url);
    const { rows } = await client.query<{ n: number }>('SELECT 41 + 1 AS n');
    expect(rows[0]?.n).toBe(42);
    expect(proxy.stats()).toMatchObject({ linksAccepted: 1, linksOpen: 1 });
    expect(proxy.stats().bytesUp).toBeGreaterThan(0);
  });

  it('drop-responses: the server acts, the client never hears', async () => {
    const { proxy, url } = await proxyTo(databaseUrl);
    const client = await connect(url, { query_timeout: 1_500 });
    proxy.setMode({ kind: 'drop-responses' });
    await expect(client.query('INSERT INTO fault_proxy_probe VALUES (1)')).rejects.toThrow(
      /timeout/i,
    );
    const { rows } = await direct.query('SELECT id FROM fault_proxy_probe WHERE id = 1');
    expect(rows).toHaveLength(1);
    expect(proxy.stats().bytesDropped).toBeGreaterThan(0);
  });

  it('black-hole: no answer, no reset; what was held arrives when the link returns', async () => {
    const { proxy, url } = await proxyTo(databaseUrl);
    const client = await connect(url);
    proxy.setMode({ kind: 'black-hole' });
    let settled = false;
    const query = client.query<{ n: number }>('SELECT 7 AS n').finally(() => (settled = true));
    await sleep(1_000);
    expect(settled).toBe(false);
    expect(proxy.stats().linksOpen).toBe(1);
    proxy.setMode({ kind: 'pass' });
    expect((await query).rows[0]?.n).toBe(7);
  });

  it('delay: answers come late, in order', async () => {
    const { proxy, url } = await proxyTo(databaseUrl);
    const client = await connect(url);
    proxy.setMode({ kind: 'delay', ms: 300 });
    const started = Date.now();
    const results = await Promise.all([1, 2, 3].map((n) => client.query(`SELECT ${n} AS n`)));
    expect(results.map((r) => (r.rows[0] as { n: number }).n)).toEqual([1, 2, 3]);
    // Two legs of 300 ms each at least (request and response).
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
  });

  it('reset: open links get a reset, new ones are refused until pass', async () => {
    const { proxy, url } = await proxyTo(databaseUrl);
    const client = await connect(url);
    // events.once would reject on the 'error' that comes with the reset: wait for 'end'.
    const ended = new Promise<void>((resolve) => client.on('end', () => resolve()));
    proxy.setMode({ kind: 'reset' });
    await ended;
    await expect(connect(url)).rejects.toThrow(/ECONNRESET|Connection terminated/);
    proxy.setMode({ kind: 'pass' });
    const again = await connect(url);
    expect((await again.query('SELECT 1 AS n')).rows[0]).toEqual({ n: 1 });
    expect(proxy.stats().linksReset).toBeGreaterThanOrEqual(2);
  });
});

describe('FaultProxy on a plain TCP link', () => {
  it('emits a request event per chunk forwarded, so a test can act after one request', async () => {
    const server = net.createServer((s) => s.on('data', (d: Buffer) => s.write(d)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    const proxy = await FaultProxy.start({ target: { host: '127.0.0.1', port } });
    proxies.push(proxy);
    const seen: number[] = [];
    proxy.on('request', (_link, bytes) => seen.push(bytes));
    const socket = net.connect(proxy.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('hello');
    const [echo] = (await once(socket, 'data')) as [Buffer];
    expect(echo.toString()).toBe('hello');
    expect(seen).toEqual([5]);
    socket.destroy();
    await waitFor(() => proxy.stats().linksOpen === 0, { what: 'the link to close' });
    await new Promise((r) => server.close(r));
  });
});

describe('parsing', () => {
  it('reads modes and routes, and names what is wrong', () => {
    expect(parseFaultMode('delay:250')).toEqual({ kind: 'delay', ms: 250 });
    expect(parseFaultMode('black-hole')).toEqual({ kind: 'black-hole' });
    expect(() => parseFaultMode('delay:x')).toThrow(/milliseconds/);
    expect(() => parseFaultMode('drop')).toThrow(/unknown fault mode "drop"/);
    expect(parseRoutes('127.0.0.1:9092=127.0.0.1:19092')).toEqual(
      new Map([['127.0.0.1:9092', '127.0.0.1:19092']]),
    );
    expect(() => parseRoutes('a=b')).toThrow(/not host:port/);
  });
});
