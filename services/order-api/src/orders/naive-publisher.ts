import { randomUUID } from 'node:crypto';
import {
  DEFAULT_MAX_PAYLOAD_BYTES,
  serializeEvent,
  toMessage,
  traceHeaders,
  type Logger,
  type OutboxEvent,
} from '@outbox/core';
import { FailurePoint, validateEvent, type FailurePointGate } from '@outbox/lab';
import type { Message, Producer } from 'kafkajs';
import type { KafkaNetwork } from '../kafka.ts';
import type { ApiMetrics } from '../metrics.ts';
import { HttpError } from '../http/errors.ts';

/** An event of the naive mode, ready to produce: its id and its Kafka message. */
export interface NaiveEvent {
  id: string;
  message: Message;
}

export interface NaivePublisherOptions {
  producer: Producer;
  network: KafkaNetwork;
  topic: string;
  failurePoints: FailurePointGate;
  metrics: ApiMetrics;
  log: Logger;
  /** How the process dies at the crash point. Default: SIGKILL to itself, for real. */
  crash?: () => void;
  /** Broker-side ack timeout of a produce (ms). */
  ackTimeoutMs?: number;
}

/**
 * The naive dual write, kept on purpose to teach the seed's "НЕ делайте так":
 * commit the order, then produce the event to Kafka from the request. Two systems,
 * no shared transaction: whatever happens between the two writes loses an event
 * (network drop after commit) or invents one (crash after the produce, before
 * commit). The failure points below make both happen for real.
 */
export class NaivePublisher {
  private readonly crash: () => void;

  constructor(private readonly options: NaivePublisherOptions) {
    this.crash = options.crash ?? (() => process.kill(process.pid, 'SIGKILL'));
  }

  /**
   * Validates the event with the registry (same schemas and version as the outbox)
   * and builds exactly the message the relay would produce for it (core's toMessage),
   * with an id of its own: `naive-<uuid>`, as there is no outbox row.
   */
  prepare(event: OutboxEvent): NaiveEvent {
    const s = serializeEvent(validateEvent(event), DEFAULT_MAX_PAYLOAD_BYTES);
    const id = `naive-${randomUUID()}`;
    // Traced: the message carries the request's context, as the outbox row would.
    const message = toMessage({
      id,
      aggregate_type: s.aggregateType,
      aggregate_id: s.aggregateId,
      event_type: s.eventType,
      event_version: s.eventVersion,
      payload: s.payloadJson,
      headers: {
        ...(JSON.parse(s.headersJson) as Record<string, string>),
        ...traceHeaders(),
      },
      created_at: new Date(),
      attempts: 0,
    });
    return { id, message };
  }

  /**
   * Called inside the open transaction, before COMMIT. When `naive.crash_before_commit`
   * fires: produce, wait for the ack, then die. PostgreSQL rolls the order back; the
   * event stays in Kafka about an order that never existed (a phantom).
   */
  async beforeCommit(event: NaiveEvent): Promise<void> {
    if (!(await this.options.failurePoints.fire(FailurePoint.naiveCrashBeforeCommit))) return;
    this.options.log.warn({ eventId: event.id }, 'failure point: produce, then die before COMMIT');
    try {
      await this.send(event);
    } catch (error) {
      this.options.log.error({ err: error, eventId: event.id }, 'naive produce failed');
      throw new HttpError(502, 'event not published (order rolled back)');
    }
    this.crash();
    // SIGKILL does not return; a test's crash() might: never let the COMMIT run.
    await new Promise<never>(() => undefined);
  }

  /**
   * The second write, after COMMIT. When `naive.network_drop_after_commit` fires, the
   * Kafka network is cut for the duration of this produce, so it fails with a real
   * socket error. Returns whether Kafka acknowledged the event; false means the
   * order is committed and its event lost.
   */
  async afterCommit(event: NaiveEvent): Promise<boolean> {
    const { failurePoints, network, log, metrics } = this.options;
    try {
      if (await failurePoints.fire(FailurePoint.naiveNetworkDropAfterCommit)) {
        log.warn({ eventId: event.id }, 'failure point: Kafka network cut after COMMIT');
        await network.duringOutage(() => this.send(event));
      } else {
        await this.send(event);
      }
      return true;
    } catch (error) {
      metrics.naivePublishFailures.inc();
      log.error({ err: error, eventId: event.id }, 'naive produce failed after COMMIT: event lost');
      return false;
    }
  }

  private async send(event: NaiveEvent): Promise<void> {
    await this.options.producer.send({
      topic: this.options.topic,
      acks: -1,
      timeout: this.options.ackTimeoutMs ?? 5_000,
      messages: [event.message],
    });
  }
}
