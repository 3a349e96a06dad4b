import net from 'node:net';
import tls from 'node:tls';
import type { ISocketFactory } from 'kafkajs';

/**
 * A kafkajs socketFactory that can cut the network for real: while `isDown()` is
 * true, new connections are refused (the socket is destroyed with ECONNREFUSED
 * before it connects) and `cut()` destroys every open socket, as a dropped link
 * would. The failure points "network drop after commit" and "worker ↔ Kafka outage"
 * go through it, so kafkajs meets real socket errors, not a mocked client.
 */
export class FaultySocketFactory {
  private readonly open = new Set<net.Socket>();

  constructor(private readonly isDown: () => boolean = () => false) {}

  readonly factory: ISocketFactory = ({ host, port, ssl, onConnect }) => {
    const socket = ssl
      ? tls.connect({ host, port, servername: host, ...ssl }, onConnect)
      : net.connect({ host, port }, onConnect);
    socket.setKeepAlive(true, 60_000);
    if (this.isDown()) {
      const refused = Object.assign(
        new Error(`connect ECONNREFUSED ${host}:${port} (simulated outage)`),
        {
          code: 'ECONNREFUSED',
        },
      );
      process.nextTick(() => socket.destroy(refused));
      return socket;
    }
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
    return socket;
  };

  /** Destroys every open connection now (a dropped link); returns how many. */
  cut(): number {
    const n = this.open.size;
    for (const socket of this.open) {
      socket.destroy(
        Object.assign(new Error('connection reset (simulated network drop)'), {
          code: 'ECONNRESET',
        }),
      );
    }
    this.open.clear();
    return n;
  }
}
