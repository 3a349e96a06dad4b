import { Kafka, logLevel } from 'kafkajs';
import { routedSocketFactory } from './kafka-route.ts';
import { FaultProxy } from './proxy.ts';

/** A single broker's Kafka client whose every link passes one fault proxy. */
export interface KafkaThroughProxy {
  proxy: FaultProxy;
  kafka: Kafka;
}

/**
 * Starts a FaultProxy in front of `broker` (host:port, as it advertises itself) and a
 * kafkajs client that reaches it only through the proxy. The client gives up a request
 * after 5 s and retries once, so a fault the proxy makes surfaces as a failed send in
 * seconds (kafkajs' defaults would retry it for half a minute). Close the proxy when
 * done; the client holds no connection until a producer or consumer connects.
 */
export async function kafkaThroughProxy(
  broker: string,
  clientId: string,
): Promise<KafkaThroughProxy> {
  const [host, port] = broker.split(':');
  if (!host || !port) throw new Error(`broker "${broker}" is not host:port`);
  const proxy = await FaultProxy.start({ target: { host, port: Number(port) } });
  const kafka = new Kafka({
    clientId,
    brokers: [broker],
    logLevel: logLevel.NOTHING,
    // The broker advertises the address the bootstrap list names: routing it sends
    // every link of this client through the proxy.
    socketFactory: routedSocketFactory(new Map([[broker, proxy.address]])),
    requestTimeout: 5_000,
    retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 500 },
  });
  return { proxy, kafka };
}
