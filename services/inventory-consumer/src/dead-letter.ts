import { sendAcknowledged } from '@outbox/core';
import type { KafkaMessage, Producer } from 'kafkajs';
import type { Pool } from 'pg';
import type { DeadLetterReason } from './message.ts';

export interface DeadLetter {
  consumer: string;
  /** Where the message came from. */
  topic: string;
  partition: number;
  message: KafkaMessage;
  reason: DeadLetterReason;
  detail: string;
}

/**
 * Parks a message the consumer cannot handle: the original key, value and headers go
 * to the dead-letter topic with where it came from and why, and a row goes to
 * consumer_dead_letters. The produce comes first: if the process dies in between, the
 * message is redelivered and dead-lettered again (a duplicate on the DLQ, never a loss).
 * The produce resolves only once the broker acknowledged the partition (the producer
 * must be built with relayPartitioner, see createDeadLetterProducer): kafkajs resolves
 * a send that skipped a partition missing from its metadata, and the source offset
 * would then be committed for a dead letter that is nowhere.
 */
export async function deadLetter(
  pool: Pool,
  producer: Producer,
  dlqTopic: string,
  d: DeadLetter,
): Promise<void> {
  await sendAcknowledged(
    producer,
    {
      acks: -1,
      topicMessages: [
        {
          topic: dlqTopic,
          messages: [
            {
              key: d.message.key,
              value: d.message.value,
              headers: {
                ...d.message.headers,
                dlq_reason: d.reason,
                dlq_error: d.detail.slice(0, 1_000),
                dlq_source_topic: d.topic,
                dlq_source_partition: String(d.partition),
                dlq_source_offset: d.message.offset,
                dlq_consumer: d.consumer,
              },
            },
          ],
        },
      ],
    },
    { requireChecked: true },
  );
  await pool.query(
    `INSERT INTO consumer_dead_letters (consumer, topic, kafka_partition, kafka_offset, reason)
     VALUES ($1, $2, $3, $4, $5)`,
    [
      d.consumer,
      d.topic,
      d.partition,
      d.message.offset,
      `${d.reason}: ${d.detail}`.slice(0, 2_000),
    ],
  );
}
