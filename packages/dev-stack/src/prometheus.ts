import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
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

/** One process serving /metrics. */
export interface PrometheusTarget {
  /** The `job` label: what kind of process (order-api, publisher-worker, …). */
  job: string;
  /** host:port serving /metrics. */
  address: string;
  /** More target labels, e.g. `{ process: 'publisher-worker-2' }` to tell replicas apart. */
  labels?: Record<string, string>;
}

export interface PrometheusOptions {
  binaries: PrometheusBinaries;
  /** Holds prometheus.yml, targets.json, its TSDB and prometheus.log; created when missing. */
  dir: string;
  /** What to scrape at start; {@link RunningPrometheus.setTargets} replaces the list later. */
  targets: PrometheusTarget[];
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
  /** http://127.0.0.1:<port>: the UI, /api/v1/alerts, /api/v1/rules, /graph. */
  url: string;
  /** The folder of its configuration, targets file, TSDB and log. */
  dir: string;
  /**
   * Rewrites the targets file (whole, renamed into place): Prometheus watches it and
   * scrapes the new list within seconds, no restart or reload needed.
   */
  setTargets(targets: PrometheusTarget[]): void;
  stop(): Promise<void>;
}

/** The file_sd targets file: one target group per process, its labels included. */
export function prometheusTargets(targets: PrometheusTarget[]): string {
  return JSON.stringify(
    targets.map((t) => ({ targets: [t.address], labels: { ...t.labels, job: t.job } })),
    null,
    2,
  );
}

/**
 * The configuration: one scrape job that reads its targets from `targetsFile`
 * (file_sd), so that a process added, moved to another port or removed is followed
 * by rewriting that file instead of restarting Prometheus. Each target group sets its
 * own `job` label (a target's labels win over the job name). JSON is YAML, so no YAML
 * writer is needed; `promtool check config` accepts it.
 */
export function prometheusConfig(
  options: Pick<PrometheusOptions, 'ruleFiles' | 'scrapeInterval' | 'evaluationInterval'>,
  targetsFile: string,
): string {
  return JSON.stringify(
    {
      global: {
        scrape_interval: options.scrapeInterval ?? '5s',
        evaluation_interval: options.evaluationInterval ?? options.scrapeInterval ?? '5s',
      },
      rule_files: options.ruleFiles,
      scrape_configs: [
        {
          job_name: 'outbox-lab',
          // Prometheus watches the file (inotify); the refresh is the backstop.
          file_sd_configs: [{ files: [targetsFile], refresh_interval: '30s' }],
        },
      ],
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
  const targetsFile = join(options.dir, 'targets.json');
  // Written whole and renamed into place: Prometheus never reads half a file.
  const setTargets = (targets: PrometheusTarget[]) => {
    writeFileSync(`${targetsFile}.tmp`, prometheusTargets(targets));
    renameSync(`${targetsFile}.tmp`, targetsFile);
  };
  setTargets(options.targets);
  writeFileSync(configFile, prometheusConfig(options, targetsFile));
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
    dir: options.dir,
    setTargets,
    async stop() {
      if (exited !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    },
  };
}
