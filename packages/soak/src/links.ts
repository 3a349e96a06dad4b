import { FaultProxy, type FaultProxyStats } from '@outbox/fault-proxy';
import type { StackEndpoints } from '@outbox/dev-stack';

/** The processes whose links to PostgreSQL and Kafka run through a fault proxy of their own. */
export const PROXIED_PROCESSES = [
  'publisher-worker-1',
  'publisher-worker-2',
  'inventory-consumer',
] as const;
export type ProxiedProcess = (typeof PROXIED_PROCESSES)[number];
export type LinkKind = 'pg' | 'kafka';

interface ProcessLinks {
  pg: FaultProxy;
  /** One proxy per broker (a cluster has several advertised addresses). */
  kafka: Map<string, FaultProxy>;
}

function hostPort(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(':');
  return { host: address.slice(0, i), port: Number(address.slice(i + 1)) };
}

/**
 * The soak's fault proxies: each proxied process reaches PostgreSQL through one (its
 * DATABASE_URL names the proxy) and every broker through one (KAFKA_ROUTES maps the
 * broker's advertised address to it), so a fault on one link hits one service only,
 * as a bad cable or a congested host would. All pass until a fault switches one.
 */
export class SoakLinks {
  private constructor(
    private readonly endpoints: StackEndpoints,
    private readonly links: Map<ProxiedProcess, ProcessLinks>,
  ) {}

  static async start(endpoints: StackEndpoints): Promise<SoakLinks> {
    const db = new URL(endpoints.databaseUrl);
    const links = new Map<ProxiedProcess, ProcessLinks>();
    for (const name of PROXIED_PROCESSES) {
      const pg = await FaultProxy.start({
        target: { host: db.hostname, port: Number(db.port) },
      });
      const kafka = new Map<string, FaultProxy>();
      for (const broker of endpoints.kafkaBrokers)
        kafka.set(broker, await FaultProxy.start({ target: hostPort(broker) }));
      links.set(name, { pg, kafka });
    }
    return new SoakLinks(endpoints, links);
  }

  /** The environment that sends each proxied process's links through its proxies. */
  processEnv(): Record<string, Record<string, string>> {
    const env: Record<string, Record<string, string>> = {};
    for (const [name, { pg, kafka }] of this.links) {
      const url = new URL(this.endpoints.databaseUrl);
      url.host = pg.address;
      env[name] = {
        DATABASE_URL: url.toString(),
        KAFKA_ROUTES: [...kafka].map(([broker, proxy]) => `${broker}=${proxy.address}`).join(','),
      };
    }
    return env;
  }

  /** The proxies of one process's PostgreSQL link, or of its links to every broker. */
  proxies(name: ProxiedProcess, kind: LinkKind): FaultProxy[] {
    const links = this.links.get(name)!;
    return kind === 'pg' ? [links.pg] : [...links.kafka.values()];
  }

  /** Every proxy back to pass (the end of the faults, before the drain). */
  passAll(): void {
    for (const { pg, kafka } of this.links.values()) {
      pg.setMode({ kind: 'pass' });
      for (const proxy of kafka.values()) proxy.setMode({ kind: 'pass' });
    }
  }

  /** Counters of each proxy, as `<process> pg` / `<process> kafka <broker>`. */
  stats(): Record<string, FaultProxyStats> {
    const stats: Record<string, FaultProxyStats> = {};
    for (const [name, { pg, kafka }] of this.links) {
      stats[`${name} pg`] = pg.stats();
      for (const [broker, proxy] of kafka) stats[`${name} kafka ${broker}`] = proxy.stats();
    }
    return stats;
  }

  async close(): Promise<void> {
    for (const { pg, kafka } of this.links.values()) {
      await pg.close();
      for (const proxy of kafka.values()) await proxy.close();
    }
  }
}
