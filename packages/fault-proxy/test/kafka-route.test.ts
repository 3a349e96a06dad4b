import { Kafka, logLevel } from 'kafkajs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { FaultProxy, routedSocketFactory } from '../src/index.ts';

const [broker] = inject('kafkaBrokers');

describe('routedSocketFactory', () => {
  const proxies: FaultProxy[] = [];
  afterAll(() => Promise.all(proxies.map((p) => p.close())));

  it('sends every link to the advertised broker through its proxy', async () => {
    const [host, port] = broker!.split(':') as [string, string];
    const proxy = await FaultProxy.start({ target: { host, port: Number(port) } });
    proxies.push(proxy);
    const kafka = new Kafka({
      brokers: [broker!],
      logLevel: logLevel.NOTHING,
      socketFactory: routedSocketFactory(new Map([[broker!, proxy.address]])),
    });
    const admin = kafka.admin();
    await admin.connect();
    const topics = await admin.listTopics();
    await admin.disconnect();
    expect(Array.isArray(topics)).toBe(true);
    // Bootstrap and the broker's advertised address are the same here: every byte of
    // both went through the proxy.
    expect(proxy.stats().linksAccepted).toBeGreaterThanOrEqual(1);
    expect(proxy.stats().bytesDown).toBeGreaterThan(0);
  });
});
