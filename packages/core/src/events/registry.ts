import type { z } from 'zod';
import { InvalidEventError } from '../errors.ts';
import type { OutboxEvent } from '../outbox/event.ts';

/** eventType → version → schema. The highest version is what producers write. */
export type EventSchemas = Record<string, Record<number, z.ZodObject>>;

/** eventType → version N → a function turning a payload of version N into N + 1. */
export type Upcasters = Record<
  string,
  Record<number, (payload: Record<string, unknown>) => Record<string, unknown>>
>;

export class UnknownEventError extends InvalidEventError {}

/**
 * Versioned event schemas and their upcasters: what a producer may write and how a
 * consumer reads any version it knows. A version is never edited once shipped: a change
 * is a new version, checked with `checkCompatible` against the previous one and upcast
 * on the consumer side.
 */
export class EventRegistry<S extends EventSchemas = EventSchemas> {
  constructor(
    readonly schemas: S,
    private readonly upcasters: Upcasters = {},
  ) {}

  /** The newest version of `eventType`, or undefined if the registry does not know it. */
  latestVersion(eventType: string): number | undefined {
    const versions = Object.keys(this.schemas[eventType] ?? {}).map(Number);
    return versions.length ? Math.max(...versions) : undefined;
  }

  isEventType(eventType: string): eventType is keyof S & string {
    return Object.hasOwn(this.schemas, eventType);
  }

  /**
   * The writer's validator (`new OutboxWriter({ validate: (e) => registry.validate(e) })`):
   * checks the payload against the schema of its version (the latest when none is given)
   * and stamps `eventVersion`, which the relay puts in the `event_version` header.
   * Unknown types and invalid payloads throw InvalidEventError.
   */
  validate(event: OutboxEvent): OutboxEvent {
    const version = event.eventVersion ?? this.latestVersion(event.eventType);
    const schema = version === undefined ? undefined : this.schemas[event.eventType]?.[version];
    if (!schema) throw new InvalidEventError(`no schema for ${event.eventType} v${version ?? '?'}`);
    const parsed = schema.safeParse(event.payload);
    if (!parsed.success) {
      throw new InvalidEventError(
        `${event.eventType} v${version} payload is invalid: ${parsed.error.message}`,
      );
    }
    return { ...event, eventVersion: version, payload: parsed.data };
  }

  /**
   * The consumer's reader: parses a payload of any known version and upcasts it to the
   * latest version this registry knows. An event newer than the registry knows is read
   * with its latest schema, which ignores added fields (zod objects strip unknown keys):
   * that is what keeps an old consumer working when producers move to v2.
   */
  read(
    eventType: string,
    version: number,
    payload: unknown,
  ): { eventType: string; payload: Record<string, unknown> } {
    const latest = this.latestVersion(eventType);
    if (latest === undefined) throw new UnknownEventError(`unknown event type ${eventType}`);
    let v = Math.min(version, latest);
    const initial = this.schemas[eventType]?.[v];
    if (!initial) throw new UnknownEventError(`unknown version ${version} of ${eventType}`);
    const first = initial.safeParse(payload);
    if (!first.success)
      throw new InvalidEventError(
        `${eventType} v${version} payload is invalid: ${first.error.message}`,
      );
    let current = first.data as Record<string, unknown>;
    while (v < latest) {
      const up = this.upcasters[eventType]?.[v];
      if (!up) throw new UnknownEventError(`no upcaster from ${eventType} v${v}`);
      current = up(current);
      v += 1;
    }
    const final = this.schemas[eventType]?.[latest]?.parse(current) as Record<string, unknown>;
    return { eventType, payload: final };
  }
}
