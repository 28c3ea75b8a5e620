/**
 * Takes one accepted message to its end: decoded and handled, forwarded to a retry tier, or
 * written to the dead-letter topic. It resolves `true` only once that end is durable (the
 * handler resolved, or Kafka acknowledged the forward), which is what lets the runner commit past
 * it; `false` when the message was given up (its partition was revoked or shutdown timed out), in
 * which case it stays uncommitted and is delivered again to the partition's next owner.
 *
 * Outages are waited out in place with backoff — a registry that cannot be reached, a forward
 * that Kafka does not acknowledge — since they say nothing about the message itself.
 */
import type { KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import { isRetriable, UndecodableMessageError } from '../errors.ts';
import type { EventCodec, DecodedEvent } from '../registry/event-codec.ts';
import type { EventProducer, RawMessage } from '../producer/event-producer.ts';
import { Backoff, sleep, type BackoffOptions } from '../util/backoff.ts';
import { routeFailure } from '../retry/failure-route.ts';
import type { RetryTier } from '../retry/retry-tiers.ts';
import { deadLetterFor, retryRecordFor, type DeadLetter, type SourceMessage } from '../retry/dead-letter.ts';
import { attemptOf, describeError, headerStrings, originOf, type DeadLetterReason } from '../retry/retry-headers.ts';
import type { ConsumedEvent, EventHandler } from './consumed-event.ts';
import type { ConsumerMetrics } from '../metrics/consumer-metrics.ts';

export interface IncomingMessage {
  readonly topic: string;
  readonly partition: number;
  readonly message: KafkaMessage;
}

export interface MessageProcessorOptions {
  readonly handler: EventHandler;
  readonly codec: EventCodec;
  readonly producer: EventProducer;
  readonly retryTiers: readonly RetryTier[];
  readonly deadLetterTopic: string;
  readonly onDeadLetter: ((deadLetter: DeadLetter) => Promise<void> | void) | undefined;
  readonly backoff: BackoffOptions;
  readonly metrics: ConsumerMetrics;
  readonly logger: Logger;
}

type Decoded = { readonly ok: true; readonly event: DecodedEvent } | { readonly ok: false; readonly error: unknown };

export class MessageProcessor {
  constructor(private readonly o: MessageProcessorOptions) {}

  /** Never rejects. */
  async process(incoming: IncomingMessage, signal: AbortSignal): Promise<boolean> {
    try {
      return await this.run(incoming, signal);
    } catch (err) {
      // A bug in this file, not in the message: keep the message uncommitted and say so loudly.
      this.o.logger.error({ err, topic: incoming.topic, partition: incoming.partition, offset: incoming.message.offset }, 'message processing crashed');
      return false;
    }
  }

  private async run(incoming: IncomingMessage, signal: AbortSignal): Promise<boolean> {
    const source = sourceOf(incoming);
    const attempt = attemptOf(incoming.message.headers);
    const decoded = await this.decode(source, signal);
    if (!decoded) return false;
    if (!decoded.ok) return this.deadLetter(source, { reason: 'undecodable', attempts: attempt, error: decoded.error }, signal);

    const base = {
      name: decoded.event.name,
      value: decoded.event.value,
      schemaId: decoded.event.schemaId,
      topic: source.topic,
      partition: source.partition,
      offset: source.offset,
      origin: originOf(source.headers, source),
      key: source.key ? source.key.toString('utf8') : null,
      headers: headerStrings(source.headers),
      timestamp: incoming.message.timestamp,
      signal,
    };
    let backoff: Backoff | undefined; // only failures need one
    for (let current = attempt; ; ) {
      const started = performance.now();
      try {
        await this.o.handler({ ...base, attempt: current } as ConsumedEvent);
        this.o.metrics.processed(source.topic, performance.now() - started);
        return true;
      } catch (err) {
        if (signal.aborted) return false;
        const { errorClass, message } = describeError(err);
        this.o.metrics.handlerFailed(errorClass);
        const route = routeFailure(err, current, this.o.retryTiers);
        const where = { topic: source.topic, partition: source.partition, offset: source.offset, attempt: current, errorClass, error: message };
        if (route.kind === 'in-place') {
          const delay = (backoff ??= new Backoff(this.o.backoff)).next();
          this.o.logger.warn({ ...where, retryInMs: delay }, 'handler failed; retrying in place');
          await sleep(delay, signal);
          if (signal.aborted) return false;
          current = route.nextAttempt;
          continue;
        }
        if (route.kind === 'retry-tier') {
          this.o.logger.debug({ ...where, tier: route.tier.topic, dueAt: route.dueAt }, 'handler failed; forwarding to retry tier');
          const record = retryRecordFor(source, route.tier.topic, { attempt: route.nextAttempt, dueAt: route.dueAt }, err);
          if (!(await this.sendUntilAcknowledged(record, signal))) return false;
          this.o.metrics.retried(source.topic);
          return true;
        }
        return this.deadLetter(source, { reason: route.reason, attempts: current, error: err, event: decoded.event }, signal);
      }
    }
  }

  /** The decoded event, a decoding failure to dead-letter, or undefined when given up meanwhile. */
  private async decode(source: SourceMessage, signal: AbortSignal): Promise<Decoded | undefined> {
    let backoff: Backoff | undefined;
    for (;;) {
      try {
        return { ok: true, event: await this.o.codec.decode(source.value) };
      } catch (err) {
        if (err instanceof UndecodableMessageError || !isRetriable(err)) return { ok: false, error: err };
        const delay = (backoff ??= new Backoff(this.o.backoff)).next();
        this.o.logger.warn({ err, topic: source.topic, partition: source.partition, offset: source.offset, retryInMs: delay }, 'cannot decode yet (registry?); waiting');
        await sleep(delay, signal);
        if (signal.aborted) return undefined;
      }
    }
  }

  private async deadLetter(
    source: SourceMessage,
    info: { readonly reason: DeadLetterReason; readonly attempts: number; readonly error: unknown; readonly event?: DecodedEvent },
    signal: AbortSignal,
  ): Promise<boolean> {
    const { record, deadLetter } = deadLetterFor(source, { ...info, deadLetterTopic: this.o.deadLetterTopic });
    this.o.logger.warn(
      { topic: source.topic, partition: source.partition, offset: source.offset, reason: info.reason, attempts: info.attempts, errorClass: deadLetter.errorClass, error: deadLetter.errorMessage, deadLetterTopic: this.o.deadLetterTopic },
      'dead-lettering message',
    );
    if (!(await this.sendUntilAcknowledged(record, signal))) return false;
    this.o.metrics.deadLettered(source.topic);
    if (this.o.onDeadLetter) await this.runHook(deadLetter, signal);
    return true;
  }

  /**
   * Runs the app's dead-letter hook (the worker emits PageFailed there). Retriable failures are
   * retried: the dead letter is already written, and a crash before the hook succeeds re-delivers
   * the message, so hooks must be idempotent (deterministic event ids). A non-retriable failure
   * is logged and the message counts as handled, since the dead letter holds it.
   */
  private async runHook(deadLetter: DeadLetter, signal: AbortSignal): Promise<void> {
    const backoff = new Backoff(this.o.backoff);
    for (;;) {
      try {
        await this.o.onDeadLetter!(deadLetter);
        return;
      } catch (err) {
        if (!isRetriable(err)) {
          this.o.logger.error({ err, topic: deadLetter.topic, offset: deadLetter.offset }, 'onDeadLetter failed for good; the dead letter is written');
          return;
        }
        const delay = backoff.next();
        this.o.logger.warn({ err, retryInMs: delay }, 'onDeadLetter failed; retrying');
        await sleep(delay, signal);
        if (signal.aborted) return;
      }
    }
  }

  /** Sends and waits for the acknowledgement, retrying with backoff; false when given up. */
  private async sendUntilAcknowledged(record: RawMessage, signal: AbortSignal): Promise<boolean> {
    const backoff = new Backoff(this.o.backoff);
    for (;;) {
      if (signal.aborted) return false;
      try {
        await this.o.producer.sendRaw(record);
        return true;
      } catch (err) {
        const delay = backoff.next();
        this.o.logger.warn({ err, topic: record.topic, retryInMs: delay }, 'cannot forward message; retrying');
        await sleep(delay, signal);
      }
    }
  }
}

function sourceOf({ topic, partition, message }: IncomingMessage): SourceMessage {
  return { topic, partition, offset: message.offset, key: message.key ?? null, value: message.value, headers: message.headers };
}
