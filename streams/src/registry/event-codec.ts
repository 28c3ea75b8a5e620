/**
 * Encodes and decodes events in the Confluent wire format: magic byte 0, the registry's schema id
 * as a 4-byte big-endian integer, then the Avro body. Subjects follow TopicRecordNameStrategy
 * (`<topic>-<record full name>`), so one topic carries several event types.
 *
 * Schemas are registered once per (topic, event) and cached, as are the schemas fetched by id, so
 * a registry outage only stops what has never been seen before.
 *
 * A registry's 404 for a schema id is judged an outage, not a verdict on the message: a registry
 * restored empty or from an old backup, a wrong URL path, a proxy during a deploy, a replica
 * behind its leader all answer 404 for ids that valid events carry, and dead-lettering on it
 * would skip valid events for good. So it is a retriable SchemaNotFoundError, which consumers wait
 * out; it says whether the registry still serves an id this process resolved before (the
 * difference between "this id is unknown to it" and "it is not serving"). Only what the bytes
 * themselves rule out — no magic byte, a body Avro cannot read, an id naming a record that is not
 * a Trawl event — is undecodable.
 */
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import type { Resolver, Type } from 'avsc';
import { avroTypeOptions, eventSchema, fullName, isEventName, type EventMap, type EventName } from '@trawl/schemas';
import { SchemaNotFoundError, SchemaRegistryError, UndecodableMessageError } from '../errors.ts';
import { endpoints } from '@trawl/base';
import { projectedReader } from './projected-reader.ts';

export const MAGIC_BYTE = 0;

export interface DecodedEvent<N extends EventName = EventName> {
  readonly name: N;
  readonly value: EventMap[N];
  readonly schemaId: number;
}

/**
 * The fields a reader keeps of the events it names; the other fields are skipped in the bytes,
 * never built (Avro schema resolution). Events not named are decoded whole.
 */
export type EventFields = { readonly [N in EventName]?: readonly (keyof EventMap[N] & string)[] };

export interface EventCodecOptions {
  /**
   * Decode only these fields of these events. The values then hold only them, whatever their
   * TypeScript type says: for a consumer that reads nothing else (the analytics projector).
   */
  readonly fields?: EventFields;
}

export function subjectFor(topic: string, name: EventName): string {
  return `${topic}-${fullName(name)}`;
}

/**
 * Processes registering a new subject at once race on its compatibility setting: each registers
 * (idempotent), then sets BACKWARD. Apicurio answers the second setting with 409 "A rule named
 * 'COMPATIBILITY' already exists", and a process that looks between another's registration and its
 * setting finds the subject at the registry's default (the client's "BACKWARD != NONE"). Both pass
 * once the first process is done, so they are tried again after a moment.
 */
const COMPATIBILITY_RULE_RACE = /rule named 'COMPATIBILITY' already exists/i;
const COMPATIBILITY_UNSET = /Compatibility does not match the configuration \(BACKWARD != NONE\)/;
const COMPATIBILITY_RACE_ATTEMPTS = 5;

function isCompatibilityRace(err: unknown): boolean {
  const message = (err as Error | undefined)?.message ?? '';
  return (statusOf(err) === 409 && COMPATIBILITY_RULE_RACE.test(message)) || COMPATIBILITY_UNSET.test(message);
}

function statusOf(err: unknown): number | undefined {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

interface Reader {
  readonly name: EventName;
  readonly type: Type;
  readonly resolver?: Resolver;
}

/** The schema id of a framed message; UndecodableMessageError when it has no frame. */
function schemaIdOf(buffer: Buffer | null): number {
  if (!buffer || buffer.length < 5) throw new UndecodableMessageError(`message too short (${buffer?.length ?? 0} bytes)`);
  if (buffer.readUInt8(0) !== MAGIC_BYTE) throw new UndecodableMessageError(`bad magic byte ${buffer.readUInt8(0)}`);
  return buffer.readInt32BE(1);
}

/** How long a probe's answer ("does the registry serve an id we know?") is reused. */
const PROBE_TTL_MS = 5_000;

export class EventCodec {
  private readonly registry: SchemaRegistry;
  private readonly registryUrl: string;
  private probe: { readonly at: number; readonly answer: Promise<boolean | undefined> } | undefined;
  private readonly ids = new Map<string, Promise<number>>();
  private readonly types = new Map<number, Promise<{ name: EventName; type: Type }>>();
  /**
   * Resolved writer and reader types, read synchronously on the hot path: awaiting the cached
   * promises costs more than the Avro encoding itself at tens of thousands of events a second.
   */
  private readonly writers = new Map<string, { readonly id: number; readonly type: Type }>();
  private readonly readers = new Map<number, Reader>();
  private readonly fields: EventFields;

  constructor(registryUrl: string = endpoints().schemaRegistryUrl, options: EventCodecOptions = {}) {
    this.fields = options.fields ?? {};
    this.registryUrl = registryUrl;
    this.registry = new SchemaRegistry(
      { host: registryUrl, retry: { retries: 3, initialRetryTimeInSecs: 0.2, maxRetryTimeInSecs: 2 } },
      { [SchemaType.AVRO]: { ...avroTypeOptions } },
    );
  }

  /** Registers (or finds) the schema of `name` under `topic`'s subject; returns its id. */
  schemaId(topic: string, name: EventName): Promise<number> {
    const subject = subjectFor(topic, name);
    let id = this.ids.get(subject);
    if (!id) {
      id = this.registerSchema(subject, eventSchema(name), fullName(name));
      id.catch(() => this.ids.delete(subject));
      this.ids.set(subject, id);
    }
    return id;
  }

  /**
   * Registers a schema under a subject, uncached. The registry checks it against the subject's
   * compatibility (BACKWARD): a refusal (409, 422) is a non-retriable SchemaRegistryError, an
   * unreachable registry a retriable one.
   */
  async registerSchema(subject: string, schema: unknown, label: string = subject): Promise<number> {
    const register = () => this.registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject });
    for (let attempt = 1; ; attempt++) {
      try {
        return (await register()).id;
      } catch (err) {
        if (attempt < COMPATIBILITY_RACE_ATTEMPTS && isCompatibilityRace(err)) {
          await new Promise((r) => setTimeout(r, 50 * attempt));
          continue;
        }
        const status = statusOf(err);
        const refused = status === 409 || status === 422;
        throw new SchemaRegistryError(
          refused ? `registry refused schema ${label} for ${subject}: ${(err as Error).message}` : `cannot register ${subject}: ${(err as Error).message}`,
          !refused,
          { cause: err },
        );
      }
    }
  }

  private typeFor(id: number): Promise<{ name: EventName; type: Type }> {
    let entry = this.types.get(id);
    if (!entry) {
      entry = this.registry
        .getSchema(id)
        .then((schema) => {
          const type = schema as unknown as Type;
          const short = (type.name ?? '').split('.').pop() ?? '';
          if (!isEventName(short)) throw new UndecodableMessageError(`schema id ${id} is ${type.name}, not a Trawl event`);
          return { name: short, type };
        })
        .catch(async (err: unknown) => {
          this.types.delete(id);
          if (err instanceof UndecodableMessageError) throw err;
          const status = statusOf(err);
          if (status === 404) {
            const serves = await this.servesKnownIds(id);
            const judged =
              serves === true
                ? 'it serves the schema ids this process resolved before, so this id is unknown to it (a registry restored from an older backup, or a replica behind its leader?)'
                : serves === false
                  ? 'it does not serve the schema ids this process resolved before either: it is not serving (restored empty, a wrong SCHEMA_REGISTRY_URL path, a proxy?)'
                  : 'this process has resolved no other id to compare with';
            throw new SchemaNotFoundError(`the registry answers 404 for schema id ${id}; ${judged}; waiting for it`, serves, { cause: err });
          }
          throw new SchemaRegistryError(`cannot fetch schema id ${id}: ${(err as Error).message}`, true, { cause: err });
        });
      this.types.set(id, entry);
    }
    return entry;
  }

  /**
   * Whether the registry answers for a schema id this process has resolved before (other than
   * `missing`): asked over plain HTTP, since the registry client answers known ids from its cache.
   * Undefined when there is none to ask about. One answer is reused for a few seconds.
   */
  private servesKnownIds(missing: number): Promise<boolean | undefined> {
    const known = [...this.readers.keys(), ...[...this.writers.values()].map((w) => w.id)].find((id) => id !== missing);
    if (known === undefined) return Promise.resolve(undefined);
    if (this.probe && Date.now() - this.probe.at < PROBE_TTL_MS) return this.probe.answer;
    const url = new URL(`${this.registryUrl}/schemas/ids/${known}`);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (url.username || url.password) {
      headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
      url.username = '';
      url.password = '';
    }
    const answer = fetch(url, { headers, signal: AbortSignal.timeout(5_000) }).then(
      async (res) => {
        await res.body?.cancel();
        return res.ok;
      },
      () => false,
    );
    this.probe = { at: Date.now(), answer };
    return answer;
  }

  /**
   * Resolves the writer schemas of these events now, so that encoding them later needs no registry.
   * A service calls it at start for every event it produces: otherwise the first event of a kind
   * (the frontier's first JobCompleted, say) waits for a registry that may be away by then.
   */
  async prepare(events: readonly { readonly topic: string; readonly name: EventName }[]): Promise<void> {
    await Promise.all(events.map((e) => this.writerFor(e.topic, e.name)));
  }

  async encode<N extends EventName>(topic: string, name: N, value: EventMap[N]): Promise<Buffer> {
    const writer = this.writers.get(subjectFor(topic, name)) ?? (await this.writerFor(topic, name));
    let body: Buffer;
    try {
      body = writer.type.toBuffer(value);
    } catch (err) {
      throw new SchemaRegistryError(`${name} does not match its schema: ${(err as Error).message}`, false, { cause: err });
    }
    const out = Buffer.allocUnsafe(5 + body.length);
    out.writeUInt8(MAGIC_BYTE, 0);
    out.writeInt32BE(writer.id, 1);
    body.copy(out, 5);
    return out;
  }

  private async writerFor(topic: string, name: EventName): Promise<{ readonly id: number; readonly type: Type }> {
    const subject = subjectFor(topic, name);
    let writer = this.writers.get(subject);
    if (!writer) {
      const id = await this.schemaId(topic, name);
      writer = { id, type: (await this.typeFor(id)).type };
      this.writers.set(subject, writer);
    }
    return writer;
  }

  /**
   * Decodes a message value. Throws UndecodableMessageError for what can never be decoded
   * (dead-letter it); SchemaRegistryError when the registry cannot be reached and
   * SchemaNotFoundError when it answers 404 for the id (both retriable: wait).
   */
  async decode(buffer: Buffer | null): Promise<DecodedEvent> {
    const id = schemaIdOf(buffer);
    return this.decodeBody(this.readers.get(id) ?? (await this.readerFor(id)), buffer!, id);
  }

  /**
   * decode() for a reader of some events only (a projection's canHandle, a live feed's names):
   * undefined, without reading the body, for an event `handles` leaves out — the schema id names
   * the event. A body Avro cannot read is therefore found only by the readers that handle its event.
   * Throws as decode() does otherwise.
   */
  async decodeIf(buffer: Buffer | null, handles: ReadonlySet<EventName>): Promise<DecodedEvent | undefined> {
    const id = schemaIdOf(buffer);
    const reader = this.readers.get(id) ?? (await this.readerFor(id));
    return handles.has(reader.name) ? this.decodeBody(reader, buffer!, id) : undefined;
  }

  /**
   * decode() without a promise, for readers of many messages a second: the event, or undefined
   * when its schema has not been fetched yet (then call decode()). Throws as decode() does for
   * bytes that can never be decoded.
   */
  decodeKnown(buffer: Buffer | null): DecodedEvent | undefined {
    const id = schemaIdOf(buffer);
    const reader = this.readers.get(id);
    return reader ? this.decodeBody(reader, buffer!, id) : undefined;
  }

  /** The reader of a schema id: the writer's schema from the registry, projected to `fields`. */
  private async readerFor(id: number): Promise<Reader> {
    const { name, type } = await this.typeFor(id);
    const keep = this.fields[name];
    const reader: Reader = keep ? { name, ...projectedReader(type, keep) } : { name, type };
    this.readers.set(id, reader);
    return reader;
  }

  private decodeBody({ name, type, resolver }: Reader, buffer: Buffer, id: number): DecodedEvent {
    try {
      const value = type.fromBuffer(buffer.subarray(5), resolver) as EventMap[EventName];
      return { name, value, schemaId: id };
    } catch (err) {
      throw new UndecodableMessageError(`corrupt ${name} body (schema id ${id}): ${(err as Error).message}`, { cause: err });
    }
  }
}
