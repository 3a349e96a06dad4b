import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePrometheus, startPrometheus, type RunningPrometheus } from '../src/prometheus.ts';
import { waitFor } from '../src/wait.ts';

/** A /metrics endpoint on a free port, as a service serves it. */
async function metricsServer(): Promise<{ server: Server; address: string }> {
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/plain; version=0.0.4');
    res.end('# TYPE lab_up gauge\nlab_up 1\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, address: `127.0.0.1:${(server.address() as { port: number }).port}` };
}

interface Target {
  labels: Record<string, string>;
  health: string;
}

/**
 * The demo's Prometheus follows its targets file: a process that moves to another port
 * is scraped there after setTargets rewrites the file, and the old address is dropped,
 * with no restart of Prometheus (file_sd: it watches the file).
 */
describe('startPrometheus targets', () => {
  let dir: string;
  let prometheus: RunningPrometheus;
  const servers: Server[] = [];

  beforeAll(async () => {
    const binaries = ensurePrometheus((line) => process.stderr.write(`[prometheus] ${line}\n`));
    dir = await mkdtemp(join(tmpdir(), 'dev-stack-prometheus-'));
    prometheus = await startPrometheus({
      binaries,
      dir,
      targets: [],
      ruleFiles: [],
      scrapeInterval: '1s',
    });
  });
  afterAll(async () => {
    await prometheus?.stop();
    for (const s of servers) s.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const targets = async () => {
    const res = await fetch(`${prometheus.url}/api/v1/targets?state=active`);
    return ((await res.json()) as { data: { activeTargets: Target[] } }).data.activeTargets;
  };

  it('scrapes a process where setTargets says it is now', async () => {
    const first = await metricsServer();
    servers.push(first.server);
    prometheus.setTargets([
      {
        job: 'publisher-worker',
        address: first.address,
        labels: { process: 'publisher-worker-1' },
      },
    ]);
    const up = await waitFor(
      async () => {
        const t = await targets();
        return t.length === 1 && t[0]?.health === 'up' ? t[0] : undefined;
      },
      { what: 'the first address scraped', timeoutMs: 30_000 },
    );
    expect(up.labels).toMatchObject({
      job: 'publisher-worker',
      process: 'publisher-worker-1',
      instance: first.address,
    });

    // Restarted on another port: the file is rewritten, Prometheus follows.
    const moved = await metricsServer();
    servers.push(moved.server);
    prometheus.setTargets([
      {
        job: 'publisher-worker',
        address: moved.address,
        labels: { process: 'publisher-worker-1' },
      },
    ]);
    const now = await waitFor(
      async () => {
        const t = await targets();
        return t.length === 1 && t[0]?.labels.instance === moved.address && t[0].health === 'up'
          ? t
          : undefined;
      },
      { what: 'the new address scraped, the old one dropped', timeoutMs: 30_000 },
    );
    expect(now.map((t) => t.labels.instance)).toEqual([moved.address]);
  });
});
