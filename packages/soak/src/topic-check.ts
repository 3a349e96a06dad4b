import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import type { Pool } from 'pg';

export interface TopicCheck {
  /** Messages read (every partition up to its high watermark). */
  messages: number;
  /** Outbox rows marked sent. */
  sent: number;
  /** Rows marked sent whose event_id is not on the topic: events the relay really lost. */
  sentNotOnTopic: number;
  /** A few of them, for the log. */
  examples: string[];
}

/**
 * Reads the whole topic, independently of the consumer, and compares it with the
 * outbox: a row marked sent must be on the topic. This tells a lost event (the relay
 * marked it sent, the broker never kept it) from one the consumer has not applied.
 */
export async function checkTopic(
  brokers: string[],
  topic: string,
  pool: Pool,
  timeoutMs = 180_000,
): Promise<TopicCheck> {
  const kafka = new Kafka({
    clientId: 'soak-topic-check',
    brokers,
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<number, bigint>();
  try {
    for (const p of await admin.fetchTopicOffsets(topic)) ends.set(p.partition, BigInt(p.high));
  } finally {
    await admin.disconnect();
  }
  const seen = new Set<string>();
  let messages = 0;
  const next = new Map<number, bigint>([...ends.keys()].map((p) => [p, 0n]));
  const complete = () => [...ends].every(([p, high]) => (next.get(p) ?? 0n) >= high);
  if (!complete()) {
    const consumer = kafka.consumer({ groupId: `soak-check-${randomBytes(4).toString('hex')}` });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      let finish: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (finish = resolve));
      await consumer.run({
        eachMessage: async ({ partition, message }) => {
          messages += 1;
          const id = message.headers?.event_id;
          if (id !== undefined) seen.add(String(Array.isArray(id) ? id[0] : id));
          next.set(partition, BigInt(message.offset) + 1n);
          if (complete()) finish();
        },
      });
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<void>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`topic check: ${topic} not read to its end in ${timeoutMs} ms`)),
          timeoutMs,
        );
      });
      await Promise.race([done, timedOut]).finally(() => clearTimeout(timer));
    } finally {
      await consumer.disconnect();
    }
  }
  const { rows } = await pool.query<{ id: string }>(
    'SELECT id::text AS id FROM outbox WHERE sent_at IS NOT NULL ORDER BY id',
  );
  const missing = rows.filter((r) => !seen.has(r.id)).map((r) => r.id);
  return {
    messages,
    sent: rows.length,
    sentNotOnTopic: missing.length,
    examples: missing.slice(0, 5),
  };
}
