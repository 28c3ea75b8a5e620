/**
 * The one way events reach Kafka. Fills the envelope, encodes through the registry, and batches:
 * calls made in the same few milliseconds go out in one idempotent `sendBatch` (acks=all), and
 * each call's promise settles when its own message is acknowledged, so callers can still "produce
 * first, then commit" one message at a time without paying a round trip each.
 *
 * One batch is in flight at a time: kafkajs's idempotent producer can lose or reject messages when
 * several sends race on one partition (tulios/kafkajs#1005, #598). While a batch is in flight the
 * next one fills up, so throughput comes from batch size rather than from concurrency.
 *
 * Messages go out in call order, also when the first event of a type still waits for its schema
 * to be registered: emit() takes its place in the queue before encoding, and a batch only takes
 * the encoded prefix of the queue. Otherwise an emit whose schema is cached could overtake an
 * earlier one for the same key. The cost: the first emit of each event type (once per process)
 * holds later sends for the time of one registry round trip.
 *
 * A batch is bounded in bytes as well as in messages. kafkajs never splits a send: the messages
 * of one partition go out as one record batch, and the broker refuses a record batch above
 * `message.max.bytes` (1 MiB by default) — all of it, for every caller in the batch, again on
 * every retry. Bounding the whole send below that limit keeps any partition's share under it.
 *
 * An event is bounded too (`maxEventBytes`, TRAWL_MAX_EVENT_BYTES): one over it is refused here,
 * with an EventTooLargeError naming it, before it reaches the queue — a broker refusal would come
 * after the other events of the same unit of work had already been written. `encode()` gives a
 * caller that produces several events as one unit (a page's items and its PageFetched) the sizes
 * of all of them before it sends any.
 */
import type { Kafka, Message, Producer, IHeaders } from 'kafkajs';
import { CompressionTypes } from '../kafka/kafkajs.ts';
import { keyedPartitioner } from '../kafka/keyed-partitioner.ts';
import type { EventMap, EventName } from '@trawl/schemas';
import type { Logger } from 'pino';
import { EventCodec } from '../registry/event-codec.ts';
import { EventTooLargeError } from '../errors.ts';
import { EVENT_TOPIC } from './event-topics.ts';
import { EVENT_DELIVERY, type DeliverySettings } from './delivery.ts';
import { randomEventId, counterIn, defaultMetrics, injectTraceHeaders, inSendSpan } from '@trawl/base';
import { context, type Context } from '@opentelemetry/api';
import type { Registry } from 'prom-client';
import { describeError } from '../retry/retry-headers.ts';

/** An event's body: the envelope (event_id, occurred_at, causation_id) is filled here. */
export type EventBody<N extends EventName> = Omit<EventMap[N], 'event_id' | 'occurred_at' | 'causation_id'>;

export interface EmitOptions {
  /** Deterministic id (see eventId()); random when the event can never be re-emitted. */
  readonly eventId?: string;
  readonly causationId?: string | null;
  readonly occurredAt?: Date;
  /** Partition key; defaults to the event's job_id. */
  readonly key?: string;
  readonly headers?: IHeaders;
  /** Overrides the catalogue's topic (tests, retry tiers). */
  readonly topic?: string;
}

/** Where a complete event goes: its envelope (id, time, cause) is the event's own. */
export type RouteOptions = Pick<EmitOptions, 'key' | 'headers' | 'topic'>;

export interface RawMessage {
  readonly topic: string;
  readonly key: string | Buffer | null;
  readonly value: Buffer | null;
  readonly headers?: IHeaders;
}

/** An event encoded and measured by `encode()`, ready for `sendRaw()`. */
export interface EncodedEvent extends RawMessage {
  readonly name: EventName;
  readonly eventId: string;
  /** What the record costs on the wire (key, value, headers, record overhead): what the limit bounds. */
  readonly bytes: number;
}

/**
 * The default event limit: the broker's default `message.max.bytes` (1,048,588) less room for the
 * record batch's own header and for what travels with a record later (a retry tier's headers, a
 * dead letter's origin and error), so any event produced can also be forwarded.
 */
export const DEFAULT_MAX_EVENT_BYTES = 1_000_000;

/** TRAWL_MAX_EVENT_BYTES, else the default; lower it with the broker's `message.max.bytes`. */
export function maxEventBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TRAWL_MAX_EVENT_BYTES;
  if (raw === undefined || raw === '') return DEFAULT_MAX_EVENT_BYTES;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1_024) throw new RangeError(`TRAWL_MAX_EVENT_BYTES must be a whole number of bytes ≥ 1024, got "${raw}"`);
  return n;
}

interface Pending {
  readonly topic: string;
  /** Undefined while the event is being encoded. */
  message: Message | undefined;
  bytes: number;
  /** Encoding failed: the caller was told; the slot is dropped when the queue reaches it. */
  failed: boolean;
  resolve(): void;
  reject(err: unknown): void;
}

export interface EventProducerOptions {
  readonly kafka: Kafka;
  readonly logger: Logger;
  readonly codec?: EventCodec;
  /** How long a batch waits for company (ms). */
  readonly lingerMs?: number;
  readonly maxBatchMessages?: number;
  /** Bytes of one send (keys, values, headers, record overhead). Default 900 000, under 1 MiB. */
  readonly maxBatchBytes?: number;
  /** Bytes of one record (key, value, headers, record overhead). Default TRAWL_MAX_EVENT_BYTES, else DEFAULT_MAX_EVENT_BYTES. */
  readonly maxEventBytes?: number;
  /** Where the producer counts its events and errors; default the process-wide registry. */
  readonly metrics?: Registry;
}

/** What a record costs on the wire besides its key, value and headers (varints, attributes). */
const RECORD_OVERHEAD_BYTES = 24;

function headerBytes(headers: IHeaders | undefined): number {
  let n = 0;
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) n += k.length + (typeof item === 'string' ? Buffer.byteLength(item) : item.length) + 4;
  }
  return n;
}

function recordBytes(m: Message): number {
  const key = m.key == null ? 0 : typeof m.key === 'string' ? Buffer.byteLength(m.key) : m.key.length;
  const value = m.value == null ? 0 : typeof m.value === 'string' ? Buffer.byteLength(m.value) : m.value.length;
  return RECORD_OVERHEAD_BYTES + key + value + headerBytes(m.headers);
}

export class EventProducer {
  readonly codec: EventCodec;
  /** The largest record this producer sends; event builders bound what they build to it. */
  readonly maxEventBytes: number;
  private readonly producer: Producer;
  /** What every send waits for; checked against the topics' replication at service start (delivery.ts). */
  readonly delivery: DeliverySettings = EVENT_DELIVERY;
  private readonly logger: Logger;
  private readonly lingerMs: number;
  private readonly maxBatch: number;
  private readonly maxBatchBytes: number;
  private queue: Pending[] = [];
  private queuedBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private readonly idle: (() => void)[] = [];
  private connected = false;
  private readonly sent;
  private readonly errors;

  constructor({ kafka, logger, codec, lingerMs = 2, maxBatchMessages = 5000, maxBatchBytes = 900_000, maxEventBytes, metrics = defaultMetrics }: EventProducerOptions) {
    this.sent = counterIn(metrics, 'trawl_producer_events_total', 'Records (events, and the retry and dead-letter copies a consumer forwards) acknowledged by Kafka, by topic.', ['topic']);
    this.errors = counterIn(metrics, 'trawl_producer_errors_total', 'Events that could not be emitted (encode, size or send failures), by topic and error class.', ['topic', 'error_class']);
    this.codec = codec ?? new EventCodec();
    this.maxEventBytes = maxEventBytes ?? maxEventBytesFromEnv();
    this.logger = logger;
    this.lingerMs = lingerMs;
    this.maxBatch = maxBatchMessages;
    this.maxBatchBytes = maxBatchBytes;
    // Idempotent: the broker drops the duplicates a retried send would otherwise write.
    // Retries without a count limit: kafkajs only retries what is retriable (a broker restarting,
    // a leader moving), and giving up would turn an outage into lost events.
    this.producer = kafka.producer({
      idempotent: this.delivery.idempotent,
      maxInFlightRequests: this.delivery.maxInFlightRequests,
      allowAutoTopicCreation: false,
      createPartitioner: keyedPartitioner(),
      retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 200, maxRetryTime: 10_000 },
    });
  }

  async connect(): Promise<void> {
    if (this.connected) return;
    await this.producer.connect();
    this.connected = true;
  }

  /**
   * Resolves the schemas of the events this producer will emit (on their catalogue topics) while the
   * registry is known to answer, so a registry outage later does not hold up the first of each kind.
   */
  async prepare(names: readonly EventName[]): Promise<void> {
    await this.codec.prepare(names.map((name) => ({ topic: EVENT_TOPIC[name], name })));
  }

  /** Encodes and sends one event; resolves once Kafka has acknowledged it. Returns its event_id. */
  emit<N extends EventName>(name: N, body: EventBody<N>, options: EmitOptions = {}): Promise<string> {
    return this.emitEvent(name, this.complete(body, options), options);
  }

  /**
   * emit() for an event that carries its envelope already (event_id, occurred_at, causation_id),
   * as a decider's output does: sent as it is, never taken apart and put together again.
   */
  async emitEvent<N extends EventName>(name: N, event: EventMap[N], options: RouteOptions = {}): Promise<string> {
    return inSendSpan(name, options.topic ?? EVENT_TOPIC[name], event, async (ctx, span) => {
      const e = this.route(name, event, options, ctx);
      span.setAttribute('messaging.message.id', e.eventId);
      await this.enqueue(name, e);
      return e.eventId;
    });
  }

  private enqueue<N extends EventName>(name: N, e: { eventId: string; value: EventMap[N]; topic: string; key: string | null; headers: IHeaders }): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const slot: Pending = { topic: e.topic, message: undefined, bytes: 0, failed: false, resolve, reject };
      this.queue.push(slot);
      this.codec.encode(e.topic, name, e.value).then(
        (encoded) => {
          const message = { key: e.key, value: encoded, headers: e.headers };
          const bytes = recordBytes(message);
          const tooLarge = this.tooLarge(name, e.eventId, e.topic, bytes);
          if (tooLarge) {
            slot.failed = true;
            this.failed(e.topic, tooLarge);
            reject(tooLarge);
          } else {
            slot.message = message;
            slot.bytes = bytes;
            this.queuedBytes += bytes;
          }
          this.scheduleFlush();
        },
        (err: unknown) => {
          slot.failed = true;
          this.failed(e.topic, err);
          reject(err);
          this.scheduleFlush();
        },
      );
    });
  }

  /**
   * Encodes one event without sending it, and measures it: throws EventTooLargeError when it is over
   * the limit. Send it with `sendRaw()`; events encoded one after another go out in sendRaw order.
   */
  encode<N extends EventName>(name: N, body: EventBody<N>, options: EmitOptions = {}): Promise<EncodedEvent> {
    return this.encodeEvent(name, this.complete(body, options), options);
  }

  /** encode() for an event that carries its envelope already (see emitEvent). */
  async encodeEvent<N extends EventName>(name: N, event: EventMap[N], options: RouteOptions = {}): Promise<EncodedEvent> {
    const e = this.route(name, event, options);
    try {
      const value = await this.codec.encode(e.topic, name, e.value);
      const bytes = recordBytes({ key: e.key, value, headers: e.headers });
      const tooLarge = this.tooLarge(name, e.eventId, e.topic, bytes);
      if (tooLarge) throw tooLarge;
      return { name, eventId: e.eventId, topic: e.topic, key: e.key, value, headers: e.headers, bytes };
    } catch (err) {
      this.failed(e.topic, err);
      throw err;
    }
  }

  /** Counts an event that will not be sent (encode, size or send failure). */
  private failed(topic: string, err: unknown, count = 1): void {
    this.errors.inc({ topic, error_class: describeError(err).errorClass }, count);
  }

  /**
   * Sends already-encoded bytes: events from `encode()` (measured there), and messages that retry
   * tiers and dead letters forward as they are (they were in Kafka already, so not measured again).
   */
  sendRaw(message: RawMessage): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const m: Message = { key: message.key, value: message.value, headers: message.headers };
      const bytes = recordBytes(m);
      this.queue.push({ topic: message.topic, message: m, bytes, failed: false, resolve, reject });
      this.queuedBytes += bytes;
      this.scheduleFlush();
    });
  }

  /** The body with its envelope: the options' id, time and cause, else a random id, now and none. */
  private complete<N extends EventName>(body: EventBody<N>, options: EmitOptions): EventMap[N] {
    return {
      event_id: options.eventId ?? randomEventId(),
      occurred_at: options.occurredAt ?? new Date(),
      causation_id: options.causationId ?? null,
      ...body,
    } as unknown as EventMap[N];
  }

  /** Topic, key (the event's job_id by default), and headers carrying the event's name and the trace context `ctx` (the active one by default). */
  private route<N extends EventName>(name: N, event: EventMap[N], options: RouteOptions, ctx: Context = context.active()) {
    const eventId = (event as { event_id: string }).event_id;
    const topic = options.topic ?? EVENT_TOPIC[name];
    const key = options.key ?? (event as { job_id?: string }).job_id ?? null;
    const headers: IHeaders = injectTraceHeaders(ctx, { 'trawl-event': name, ...options.headers });
    return { eventId, value: event, topic, key, headers };
  }

  private tooLarge(name: EventName, eventId: string, topic: string, bytes: number): EventTooLargeError | undefined {
    if (bytes <= this.maxEventBytes) return undefined;
    return new EventTooLargeError(
      `${name} ${eventId} is ${bytes} bytes on ${topic}, over the ${this.maxEventBytes}-byte event limit (TRAWL_MAX_EVENT_BYTES): the broker would refuse it`,
      { event: name, eventId, topic, bytes, limit: this.maxEventBytes },
    );
  }

  private scheduleFlush(): void {
    if (this.queue.length >= this.maxBatch || this.queuedBytes >= this.maxBatchBytes) this.flushSoon(0);
    else this.flushSoon(this.lingerMs);
  }

  private flushSoon(delay: number): void {
    if (this.sending) return; // the in-flight batch's completion flushes what queued meanwhile
    if (delay === 0) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.flush();
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, delay);
  }

  private flush(): void {
    if (this.sending) return;
    // The encoded prefix of the queue, skipping failed slots; at least one message, however
    // big: a lone oversized message fails alone.
    const batch: (Pending & { message: Message })[] = [];
    let bytes = 0;
    let taken = 0;
    for (; taken < this.queue.length; taken++) {
      const p = this.queue[taken]!;
      if (p.failed) continue;
      if (!p.message) break;
      if (batch.length >= this.maxBatch || (batch.length > 0 && bytes + p.bytes > this.maxBatchBytes)) break;
      batch.push(p as Pending & { message: Message });
      bytes += p.bytes;
    }
    this.queue.splice(0, taken);
    this.queuedBytes -= bytes;
    if (batch.length === 0) {
      this.wakeIfIdle();
      return;
    }
    const byTopic = new Map<string, Message[]>();
    for (const p of batch) {
      let list = byTopic.get(p.topic);
      if (!list) byTopic.set(p.topic, (list = []));
      list.push(p.message);
    }
    this.sending = this.producer
      .sendBatch({
        acks: this.delivery.acks,
        compression: CompressionTypes.None,
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
      })
      .then(
        () => {
          for (const [topic, messages] of byTopic) this.sent.inc({ topic }, messages.length);
          batch.forEach((p) => p.resolve());
        },
        (err: unknown) => {
          this.logger.error({ err, messages: batch.length }, 'produce failed');
          for (const [topic, messages] of byTopic) this.failed(topic, err, messages.length);
          batch.forEach((p) => p.reject(err));
        },
      )
      .finally(() => {
        this.sending = undefined;
        this.flush();
      });
  }

  private wakeIfIdle(): void {
    if (!this.sending && this.queue.length === 0) this.idle.splice(0).forEach((r) => r());
  }

  /** Sends what is queued and waits for every outstanding acknowledgement. */
  async drain(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.flush();
    if (!this.sending && this.queue.length === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  async disconnect(): Promise<void> {
    await this.drain();
    if (this.connected) await this.producer.disconnect();
    this.connected = false;
  }
}
