import net from 'node:net';
import tls from 'node:tls';
import type { ISocketFactory } from 'kafkajs';

/**
 * Broker address → the address to dial instead (each `host:port`): the lab's way to
 * put a fault proxy on a service's Kafka links. Kafka clients connect to the addresses
 * the brokers advertise in metadata, not to the bootstrap list, so a proxy named in
 * KAFKA_BROKERS alone would be bypassed after the first metadata answer.
 */
export type KafkaRoutes = ReadonlyMap<string, string>;

/**
 * Parses `broker=proxy,broker=proxy` (each `host:port`); throws naming the bad pair.
 * The fault proxy parses the same text (its parseRoutes), but it cannot be imported
 * here: fault-proxy's tests use the testkit, which uses this package (a cycle).
 */
export function parseKafkaRoutes(text: string): Map<string, string> {
  const routes = new Map<string, string>();
  for (const pair of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [from, to, extra] = pair.split('=');
    if (!from || !to || extra !== undefined || !isAddress(from) || !isAddress(to))
      throw new Error(`"${pair}" is not broker=proxy (host:port=host:port)`);
    routes.set(from, to);
  }
  return routes;
}

function isAddress(text: string): boolean {
  const i = text.lastIndexOf(':');
  const port = Number(text.slice(i + 1));
  return i > 0 && Number.isInteger(port) && port > 0 && port <= 65_535;
}

/** What kafkajs does without a socketFactory: plain TCP or TLS, keep-alive on. */
export const directSocketFactory: ISocketFactory = ({ host, port, ssl, onConnect }) => {
  const socket = ssl
    ? tls.connect(
        { host, port, ...(net.isIP(host) ? {} : { servername: host }), ...ssl },
        onConnect,
      )
    : net.connect({ host, port }, onConnect);
  socket.setKeepAlive(true, 60_000);
  return socket;
};

/**
 * Wraps `factory` (a service's own, e.g. the FaultySocketFactory its failure points
 * cut, or the direct one) so that a routed broker is dialled at its route. Composed
 * rather than replaced: the failure points keep working on a proxied link. TLS keeps
 * the broker's own name for the certificate check.
 */
export function routeSockets(
  routes: KafkaRoutes,
  factory: ISocketFactory = directSocketFactory,
): ISocketFactory {
  return (args) => {
    const via = routes.get(`${args.host}:${args.port}`);
    if (!via) return factory(args);
    const i = via.lastIndexOf(':');
    const ssl =
      args.ssl && !net.isIP(args.host) ? { servername: args.host, ...args.ssl } : args.ssl;
    return factory({ ...args, host: via.slice(0, i), port: Number(via.slice(i + 1)), ssl });
  };
}
