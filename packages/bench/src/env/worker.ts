import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Child processes of the benchmarks (publishers, load writers, consumers): each runs
 * in its own Node process, as it would in production, so that two replicas really
 * use two event loops. They talk to the runner over IPC:
 *   child → {type:'ready'} once connected; parent → {type:'go'} starts the work;
 *   parent → {type, id, ...} requests, child → {type:'reply', id, body};
 *   parent → {type:'stop'}: the child stops, answers {type:'stopped'} and exits.
 */
export interface WorkerMessage {
  type: string;
  id?: number;
  body?: unknown;
  [key: string]: unknown;
}

export interface Worker {
  child: ChildProcess;
  send(message: WorkerMessage): void;
  request<T>(message: WorkerMessage, timeoutMs?: number): Promise<T>;
  stop(timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

const srcDir = fileURLToPath(new URL('..', import.meta.url));

/** Forks `src/<script>` with `spec` as its argument; resolves once it reports ready. */
export async function startWorker(
  script: string,
  spec: unknown,
  readyTimeoutMs = 60_000,
): Promise<Worker> {
  // Set by the runner's --cpu-prof: every child writes a V8 CPU profile when it exits.
  const profDir = process.env.BENCH_CPU_PROF_DIR;
  const child = fork(`${srcDir}/${script}`, [JSON.stringify(spec)], {
    execArgv: ['--import', 'tsx', ...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let nextId = 1;
  const pending = new Map<number, (body: unknown) => void>();
  child.on('message', (m: WorkerMessage) => {
    if (m.type === 'reply' && m.id !== undefined) {
      pending.get(m.id)?.(m.body);
      pending.delete(m.id);
    }
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${script} not ready in ${readyTimeoutMs} ms`)),
      readyTimeoutMs,
    );
    child.on('message', (m: WorkerMessage) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code}) before it was ready`));
    });
  });
  const worker: Worker = {
    child,
    exited,
    send: (message) => {
      if (child.connected) child.send(message);
    },
    request<T>(message: WorkerMessage, timeoutMs = 120_000) {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${script}: no reply to ${message.type} in ${timeoutMs} ms`)),
          timeoutMs,
        );
        pending.set(id, (body) => {
          clearTimeout(timer);
          resolve(body as T);
        });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`${script} exited (${code}) during ${message.type}`));
        });
        child.send({ ...message, id });
      });
    },
    async stop(timeoutMs = 30_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      worker.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
  return worker;
}

/** The child's side: handlers per message type, `stop` last; replies for requests. */
export function serveWorker(
  handlers: Record<string, (message: WorkerMessage) => Promise<unknown> | unknown>,
  onStop: () => Promise<void>,
): void {
  process.on('message', (m: WorkerMessage) => {
    if (m.type === 'stop') {
      void onStop()
        .catch((error: unknown) => process.stderr.write(`stop failed: ${String(error)}\n`))
        .finally(() => process.exit(0));
      return;
    }
    const handler = handlers[m.type];
    if (!handler) return;
    void Promise.resolve(handler(m)).then(
      (body) => m.id !== undefined && process.send?.({ type: 'reply', id: m.id, body }),
      (error: unknown) => {
        process.stderr.write(`${m.type} failed: ${String(error)}\n`);
        if (m.id !== undefined)
          process.send?.({ type: 'reply', id: m.id, body: { error: String(error) } });
      },
    );
  });
  // The runner died: nobody will ever say stop.
  process.on('disconnect', () => void onStop().finally(() => process.exit(0)));
  process.send?.({ type: 'ready' });
}

/** The spec the parent passed to startWorker. */
export function workerSpec<T>(): T {
  const raw = process.argv[2];
  if (!raw) throw new Error('worker started without a spec');
  return JSON.parse(raw) as T;
}
