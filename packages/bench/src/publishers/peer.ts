import {
  getDisabledLogger,
  initializePollingMessageListener,
  type GeneralMessageHandler,
  type PollingListenerConfig,
  type TransactionalMessage,
} from 'pg-transactional-outbox';
import type { Publisher, PublisherDeps } from './publisher.ts';

/**
 * The peer: the npm package pg-transactional-outbox, its polling listener configured
 * as its README's example does (batch size 5, 250 ms polling interval, max-attempts and
 * poisonous-message protection off for the outbox), publishing each message with the
 * same kafkajs producer. Its logical-replication listener needs `wal_level = logical`,
 * which the shared server does not run (see RESULTS.md).
 */
export function peerPublisher(deps: PublisherDeps): Publisher {
  const config: PollingListenerConfig = {
    outboxOrInbox: 'outbox',
    dbListenerConfig: deps.pgConfig,
    settings: {
      dbSchema: deps.schema,
      dbTable: 'outbox',
      enableMaxAttemptsProtection: false,
      enablePoisonousMessageProtection: false,
      nextMessagesBatchSize: 5,
      nextMessagesFunctionSchema: deps.schema,
      nextMessagesFunctionName: 'next_outbox_messages',
      nextMessagesPollingIntervalInMs: 250,
      // Its cleanup job would DELETE rows mid-run; the seed's and ours keep them too.
      messageCleanupIntervalInMs: 0,
    },
  };
  const publisher: GeneralMessageHandler = {
    handle: async (message: TransactionalMessage): Promise<void> => {
      const metadata = (message.metadata ?? {}) as Record<string, string>;
      await deps.producer.send({
        topic: deps.topic,
        acks: -1,
        timeout: 5_000,
        messages: [
          {
            key: message.aggregateId,
            value: JSON.stringify(message.payload),
            headers: { ...metadata, event_id: message.id, event_type: message.messageType },
          },
        ],
      });
    },
  };
  let shutdown: (() => Promise<void>) | undefined;
  return {
    async start() {
      [shutdown] = initializePollingMessageListener(config, publisher, getDisabledLogger());
    },
    async stop() {
      await shutdown?.();
    },
  };
}
