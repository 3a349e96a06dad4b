import type { Logger } from '@outbox/core';
import type { FaultySocketFactory } from '@outbox/lab';

/**
 * Watches the `worker.kafka_outage` switch (a cached read, no query) and cuts every
 * open broker socket when it turns on: kafkajs meets a real dropped link, and while
 * the window lasts the socket factory refuses new connections by itself.
 */
export function watchOutage(
  isActive: () => boolean,
  sockets: FaultySocketFactory,
  log: Logger,
  intervalMs = 200,
): () => void {
  let active = false;
  const timer = setInterval(() => {
    const now = isActive();
    if (now && !active) {
      const cut = sockets.cut();
      log.warn(
        { socketsCut: cut },
        'worker.kafka_outage: Kafka connections cut; relay will back off',
      );
    } else if (!now && active) {
      log.info('worker.kafka_outage over: Kafka reachable again; relay drains the backlog');
    }
    active = now;
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
