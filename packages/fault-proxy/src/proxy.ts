import { EventEmitter } from 'node:events';
import net from 'node:net';
import { describeFaultMode, type FaultMode } from './modes.ts';

export interface FaultProxyOptions {
  /** Where the links go: PostgreSQL, a Kafka broker, any TCP server. */
  target: { host: string; port: number };
  /** Listen address (default 127.0.0.1, port 0 = any free one). */
  host?: string;
  port?: number;
  mode?: FaultMode;
}

/** Counters since start, for tests and the soak's report. */
export interface FaultProxyStats {
  mode: string;
  linksAccepted: number;
  linksOpen: number;
  linksReset: number;
  bytesUp: number;
  bytesDown: number;
  bytesDropped: number;
}

/** Emitted once per chunk forwarded client → server: `request` (link id, bytes). */
export interface FaultProxyEvents {
  request: [link: number, bytes: number];
  mode: [mode: FaultMode];
}

interface Link {
  id: number;
  client: net.Socket;
  server: net.Socket;
}

/**
 * A TCP proxy on 127.0.0.1 whose behaviour is switched at run time (see FaultMode).
 * It is a real listener with real sockets on both sides: the client library meets
 * real timeouts, resets and silences, never a mocked server.
 */
export class FaultProxy extends EventEmitter<FaultProxyEvents> {
  private current: FaultMode;
  private readonly links = new Set<Link>();
  private nextId = 1;
  private readonly counters = {
    linksAccepted: 0,
    linksReset: 0,
    bytesUp: 0,
    bytesDown: 0,
    bytesDropped: 0,
  };

  private constructor(
    private readonly server: net.Server,
    private readonly target: { host: string; port: number },
    mode: FaultMode,
  ) {
    super();
    this.current = mode;
    server.on('connection', (client) => this.accept(client));
  }

  /** Starts listening; resolves once the port is bound. */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    const server = net.createServer({ pauseOnConnect: true });
    const proxy = new FaultProxy(server, options.target, options.mode ?? { kind: 'pass' });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return proxy;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  get host(): string {
    return (this.server.address() as net.AddressInfo).address;
  }

  /** `host:port` to hand to a client instead of the target's. */
  get address(): string {
    return `${this.host}:${this.port}`;
  }

  get mode(): FaultMode {
    return this.current;
  }

  /** Switches every link, open and future, to `mode`. */
  setMode(mode: FaultMode): void {
    this.current = mode;
    for (const link of this.links) {
      if (mode.kind === 'reset') this.reset(link);
      else if (mode.kind === 'black-hole') this.silence(link);
      else this.resume(link);
    }
    this.emit('mode', mode);
  }

  stats(): FaultProxyStats {
    return {
      mode: describeFaultMode(this.current),
      linksOpen: this.links.size,
      ...this.counters,
    };
  }

  /** Stops listening and resets every open link. Safe to call twice. */
  async close(): Promise<void> {
    for (const link of this.links) this.reset(link);
    if (!this.server.listening) return;
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.counters.linksAccepted += 1;
    if (this.current.kind === 'reset') {
      this.counters.linksReset += 1;
      client.resetAndDestroy();
      return;
    }
    const server = net.connect({ host: this.target.host, port: this.target.port });
    server.pause();
    const link: Link = { id: this.nextId++, client, server };
    this.links.add(link);
    const drop = () => {
      if (!this.links.delete(link)) return;
      client.destroy();
      server.destroy();
    };
    // An end or error on one side ends the other the same way a router would pass it on.
    client.on('error', () => (server.destroyed ? undefined : server.resetAndDestroy()));
    server.on('error', () => (client.destroyed ? undefined : client.resetAndDestroy()));
    client.on('end', () => this.later(() => server.end()));
    server.on('end', () => this.later(() => client.end()));
    client.on('close', drop);
    server.on('close', drop);
    client.on('data', (chunk: Buffer) => this.up(link, chunk));
    server.on('data', (chunk: Buffer) => this.down(link, chunk));
    if (this.current.kind !== 'black-hole') this.resume(link);
  }

  private up(link: Link, chunk: Buffer): void {
    this.counters.bytesUp += chunk.length;
    this.forward(link.server, chunk);
    this.emit('request', link.id, chunk.length);
  }

  private down(link: Link, chunk: Buffer): void {
    if (this.current.kind === 'drop-responses') {
      this.counters.bytesDropped += chunk.length;
      return;
    }
    this.counters.bytesDown += chunk.length;
    this.forward(link.client, chunk);
  }

  private forward(to: net.Socket, chunk: Buffer): void {
    this.later(() => to.destroyed || to.write(chunk));
  }

  // The same delay for every chunk and end keeps their order (timers of equal delay
  // fire in the order they were set).
  private later(action: () => unknown): void {
    const mode = this.current;
    if (mode.kind === 'delay' && mode.ms > 0) setTimeout(action, mode.ms);
    else action();
  }

  // Not reading is what a silent link looks like from both ends: the kernel buffers
  // fill, writes stall, no FIN or RST arrives; what was held is read on resume.
  private silence(link: Link): void {
    link.client.pause();
    link.server.pause();
  }

  private resume(link: Link): void {
    link.client.resume();
    link.server.resume();
  }

  private reset(link: Link): void {
    this.counters.linksReset += 1;
    this.links.delete(link);
    if (!link.client.destroyed) link.client.resetAndDestroy();
    if (!link.server.destroyed) link.server.resetAndDestroy();
  }
}
