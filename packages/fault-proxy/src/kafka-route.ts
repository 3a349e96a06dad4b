import net from 'node:net';
import tls from 'node:tls';
import type { ISocketFactory } from 'kafkajs';

/**
 * A kafkajs socketFactory that dials `routes[host:port]` instead of the broker's own
 * address. Kafka clients connect to the addresses the brokers advertise in metadata,
 * not to the bootstrap list, so pointing KAFKA_BROKERS at a proxy is not enough: every
 * broker's advertised address must be routed through its proxy. Unrouted addresses
 * are dialled directly.
 */
export function routedSocketFactory(routes: ReadonlyMap<string, string>): ISocketFactory {
  return ({ host, port, ssl, onConnect }) => {
    const via = routes.get(`${host}:${port}`);
    const [toHost, toPort] = via ? splitAddress(via) : [host, port];
    const socket = ssl
      ? tls.connect({ host: toHost, port: toPort, servername: host, ...ssl }, onConnect)
      : net.connect({ host: toHost, port: toPort }, onConnect);
    socket.setKeepAlive(true, 60_000);
    return socket;
  };
}

/** Parses "broker=proxy,broker=proxy" (each host:port), e.g. from an environment variable. */
export function parseRoutes(text: string): Map<string, string> {
  const routes = new Map<string, string>();
  for (const pair of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [from, to, extra] = pair.split('=');
    if (!from || !to || extra !== undefined)
      throw new Error(`route "${pair}" is not broker=proxy (host:port=host:port)`);
    splitAddress(from);
    splitAddress(to);
    routes.set(from, to);
  }
  return routes;
}

function splitAddress(address: string): [string, number] {
  const i = address.lastIndexOf(':');
  const port = Number(address.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port <= 0 || port > 65_535)
    throw new Error(`"${address}" is not host:port`);
  return [address.slice(0, i), port];
}
