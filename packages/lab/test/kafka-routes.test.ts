import net from 'node:net';
import { logLevel } from 'kafkajs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { silentLogger } from '@outbox/core';
import { baseConfigSchema, FaultySocketFactory, kafkaClient, parseConfig } from '../src/index.ts';

const env = (extra: Record<string, string>) =>
  parseConfig(baseConfigSchema, {
    DATABASE_URL: 'postgres://unused@127.0.0.1/unused',
    KAFKA_BROKERS: inject('kafkaBrokers').join(','),
    ...extra,
  });

/** A plain TCP relay to the broker that counts the links it carried (a stand-in for the lab's fault proxy). */
async function relayTo(target: string) {
  const [host, port] = target.split(':') as [string, string];
  const counts = { links: 0, bytes: 0 };
  const server = net.createServer((client) => {
    counts.links += 1;
    const upstream = net.connect({ host, port: Number(port) });
    client.on('data', (chunk: Buffer) => (counts.bytes += chunk.length));
    client.pipe(upstream).pipe(client);
    const end = () => (client.destroy(), upstream.destroy());
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return { address, counts, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('KAFKA_ROUTES (lab only)', () => {
  it('is off when unset, and a malformed value names the variable', () => {
    expect(env({}).KAFKA_ROUTES).toBeUndefined();
    expect(env({ KAFKA_ROUTES: '' }).KAFKA_ROUTES).toBeUndefined();
    expect(env({ KAFKA_ROUTES: 'a:1=b:2, c:3=d:4' }).KAFKA_ROUTES).toEqual(
      new Map([
        ['a:1', 'b:2'],
        ['c:3', 'd:4'],
      ]),
    );
    expect(() => env({ KAFKA_ROUTES: 'a:1=b' })).toThrow(
      /KAFKA_ROUTES: "a:1=b" is not broker=proxy/,
    );
    expect(() => env({ KAFKA_ROUTES: 'a:1' })).toThrow(/KAFKA_ROUTES/);
  });

  const closers: (() => Promise<void>)[] = [];
  afterAll(() => Promise.all(closers.map((c) => c())));

  it("sends the broker's links through the route, composed with the service's own socket factory", async () => {
    const [broker] = inject('kafkaBrokers');
    const relay = await relayTo(broker!);
    closers.push(relay.close);
    const sockets = new FaultySocketFactory();
    const kafka = kafkaClient(
      env({ KAFKA_ROUTES: `${broker}=${relay.address}` }),
      'routes-test',
      silentLogger,
      {
        socketFactory: sockets.factory,
        logLevel: logLevel.NOTHING,
      },
    );
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(Array.isArray(await admin.listTopics())).toBe(true);
      // The bootstrap and the advertised address are one here: every link went through
      // the relay, and through the service's factory, whose cut() still reaches them.
      expect(relay.counts.links).toBeGreaterThanOrEqual(1);
      expect(relay.counts.bytes).toBeGreaterThan(0);
      expect(sockets.cut()).toBeGreaterThanOrEqual(1);
    } finally {
      await admin.disconnect();
    }
  });
});
