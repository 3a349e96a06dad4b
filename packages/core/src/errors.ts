/**
 * Typed errors of @outbox/core. Each says whether retrying the same operation can
 * succeed (`retriable`), and keeps the underlying error as `cause`.
 */
export class OutboxError extends Error {
  readonly retriable: boolean;
  constructor(message: string, options: { cause?: unknown; retriable?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.retriable = options.retriable ?? false;
  }
}

/** The event's serialised payload is over the limit Kafka accepts (the seed's 1 MB). */
export class PayloadTooLargeError extends OutboxError {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `payload is ${bytes} bytes, over the ${limit}-byte limit: store the blob elsewhere (object storage, a blobs table) and put a reference to it in the event`,
    );
  }
}

/** The payload or headers cannot be serialised to JSON (BigInt, cycles, …). */
export class PayloadNotSerializableError extends OutboxError {}

/** The event itself is malformed: missing aggregate id, empty type, bad schema, … */
export class InvalidEventError extends OutboxError {}

/** `OutboxWriter.append` was called outside a transaction: that would be a dual write. */
export class NotInTransactionError extends OutboxError {
  constructor() {
    super(
      'OutboxWriter.append must run inside the business transaction (BEGIN … COMMIT, e.g. withTransaction): outside one the event and the business write are not atomic',
    );
  }
}

/** An aggregate type with no topic in the relay's topic map. */
export class UnknownAggregateTypeError extends OutboxError {
  constructor(readonly aggregateType: string) {
    super(`unknown aggregate type "${aggregateType}": no topic is mapped to it`);
  }
}

/**
 * The Kafka client resolved a send without an acknowledgement for some partitions it
 * wrote to: those messages may never have reached the broker. Not the rows' fault: the
 * tick fails and the batch is produced again (duplicates at worst, never a loss).
 */
export class UnacknowledgedPartitionsError extends OutboxError {
  constructor(readonly partitions: string[]) {
    super(
      `the Kafka client resolved the send without an acknowledgement for ${partitions.join(', ')}: produced again`,
      { retriable: true },
    );
  }
}

/**
 * Kafka does not know a topic of the batch (UNKNOWN_TOPIC_OR_PARTITION: being created, or
 * auto-creation off) or does not let this client write it (TOPIC_AUTHORIZATION_FAILED: an
 * ACL not granted yet). Both are Kafka's condition and pass once it is fixed: the tick
 * fails and backs off, nothing is counted against the rows (they would otherwise be
 * dead-lettered by a deploy that creates its topic a minute late).
 */
export class TopicUnavailableError extends OutboxError {
  constructor(
    readonly topics: string[],
    cause: unknown,
  ) {
    super(
      `Kafka does not know, or does not let the relay write, ${topics.length === 1 ? 'topic' : 'one of the topics'} ${topics.join(', ')} (${cause instanceof Error ? ((cause as { type?: string }).type ?? cause.message) : String(cause)}): retrying, no row is counted`,
      { cause, retriable: true },
    );
  }
}

/**
 * A send on this idempotent producer failed after its request may have reached the
 * broker, so its sequence numbers may already belong to a batch the broker appended:
 * anything else sent with them could be taken for that batch and dropped. The producer
 * must be replaced (the relay's `renewProducer`) before it sends again.
 */
export class ProducerRenewalRequiredError extends OutboxError {
  constructor() {
    super(
      'this Kafka producer must be replaced (renewProducer) before it sends again: the outcome of an earlier send is unknown and its sequence numbers may already be taken',
    );
  }
}

/** SQLSTATE codes this package reacts to. */
export const SqlState = {
  uniqueViolation: '23505',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  adminShutdown: '57P01',
  cannotConnectNow: '57P03',
} as const;
