import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './ports.ts';

/** Where Debian's `prometheus` package puts its binaries. */
export interface PrometheusBinaries {
  prometheus: string;
  promtool: string;
}

const found = (command: string) => spawnSync(command, ['--version']).status === 0;

/** Debian's Prometheus (2.42), when this machine has it. */
export function findPrometheus(): PrometheusBinaries | undefined {
  const binaries = { prometheus: 'prometheus', promtool: 'promtool' };
  return found(binaries.prometheus) && found(binaries.promtool) ? binaries : undefined;
}

/**
 * Prometheus and promtool come with Debian's `prometheus` package; nothing else can be
 * downloaded here. CI starts from a fresh machine, so the rule tests install it the
 * way the e2e specs install Chromium: through apt-get, when missing and when this
 * process may (root, apt-get present). Otherwise the error says what to run.
 */
export function ensurePrometheus(progress: (line: string) => void): PrometheusBinaries {
  const present = findPrometheus();
  if (present) return present;
  const root = process.getuid?.() === 0;
  if (!root || spawnSync('apt-get', ['--version']).status !== 0) {
    throw new Error('prometheus is not installed: run `apt-get install -y prometheus` as root');
  }
  progress('prometheus missing: apt-get install -y prometheus');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-q'],
    ['install', '-y', '-q', 'prometheus'],
  ]) {
    const r = spawnSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (${r.status})`);
  }
  const installed = findPrometheus();
  if (!installed) throw new Error('prometheus still missing after apt-get install prometheus');
  return installed;
}

export interface PrometheusOptions {
  binaries: PrometheusBinaries;
  /** Holds prometheus.yml, its TSDB and prometheus.log; created when missing. */
  dir: string;
  /** What to scrape: a job name and the host:port serving /metrics. */
  targets: { job: string; address: string }[];
  /** Alert rule files, loaded as they are. */
  ruleFiles: string[];
  /** 127.0.0.1 port of the web UI and API (default: a free one). */
  port?: number;
  /** Default 5s: a demo's chart moves; tests take 1s. */
  scrapeInterval?: string;
  evaluationInterval?: string;
  log?: (line: string) => void;
}

export interface RunningPrometheus {
  /** http://127.0.0.1:<port>: the UI, /api/v1/alerts, /graph. */
  url: string;
  stop(): Promise<void>;
}

/**
 * The scrape configuration, one job per target. JSON is YAML, so no YAML writer is
 * needed; `promtool check config` accepts it.
 */
export function prometheusConfig(options: PrometheusOptions): string {
  const jobs = new Map<string, string[]>();
  for (const t of options.targets) jobs.set(t.job, [...(jobs.get(t.job) ?? []), t.address]);
  return JSON.stringify(
    {
      global: {
        scrape_interval: options.scrapeInterval ?? '5s',
        evaluation_interval: options.evaluationInterval ?? options.scrapeInterval ?? '5s',
      },
      rule_files: options.ruleFiles,
      scrape_configs: [...jobs].map(([job, addresses]) => ({
        job_name: job,
        static_configs: [{ targets: addresses }],
      })),
    },
    null,
    2,
  );
}

/**
 * Runs Prometheus on 127.0.0.1 with the generated configuration; resolves when its
 * /-/ready answers (rejects after 30 s with the end of its log). stop() sends SIGTERM
 * (SIGKILL after 10 s).
 */
export async function startPrometheus(options: PrometheusOptions): Promise<RunningPrometheus> {
  mkdirSync(options.dir, { recursive: true });
  const configFile = join(options.dir, 'prometheus.yml');
  writeFileSync(configFile, prometheusConfig(options));
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const logFile = join(options.dir, 'prometheus.log');
  const out = openSync(logFile, 'a');
  const child = spawn(
    options.binaries.prometheus,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(options.dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--storage.tsdb.retention.time=1d',
    ],
    { stdio: ['ignore', out, out] },
  );
  closeSync(out);
  let exited: number | null | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      exited = code;
      resolve();
    }),
  );
  const tail = () => readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n');
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited !== undefined) throw new Error(`prometheus exited (${exited}):\n${tail()}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`prometheus not ready at ${url} after 30 s:\n${tail()}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  options.log?.(`prometheus: ${url} (config ${configFile}, log ${logFile})`);
  return {
    url,
    async stop() {
      if (exited !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    },
  };
}
