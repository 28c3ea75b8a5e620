/**
 * Takes one accepted message to its end: decoded and handled, forwarded to a retry tier, or
 * written to the dead-letter topic. It resolves `true` only once that end is durable (the
 * handler resolved, or Kafka acknowledged the forward), which is what lets the runner commit past
 * it; `false` when the message was given up (its partition was revoked or shutdown timed out), in
 * which case it stays uncommitted and is delivered again to the partition's next owner.
 *
 * Outages are waited out in place with backoff — a registry that cannot be reached or does not
 * know the schema id, a forward that Kafka does not acknowledge — since they say nothing about
 * the message itself.
 *
 * Deliveries without an outcome (delivery-verdict.ts): a re-read's delivery is recorded before its
 * handler runs, a suspect runs alone among suspects, and a message delivered TRAWL_MAX_DELIVERIES
 * times without an outcome — its process died, or it overran its budget (BudgetExceededError) —
 * is dead-lettered as `poison` instead of run again.
 *
 * A deferral (DeferredError: "not yet") is an outcome, neither a failure nor a delivery without one: the
 * message is parked in a retry tier until its due time as the same attempt, carrying the deliveries
 * without an outcome it already had and nothing more, and the consumer moves on.
 */
import type { KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import { BudgetExceededError, DeferredError, PoisonMessageError, UndecodableMessageError } from '../errors.ts';
import type { EventCodec, DecodedEvent } from '../registry/event-codec.ts';
import type { EventProducer, RawMessage } from '../producer/event-producer.ts';
import { Backoff, sleep, type BackoffOptions } from '../util/backoff.ts';
import { routeDeferral, routeFailure } from '../retry/failure-route.ts';
import type { RetryTier } from '../retry/retry-tiers.ts';
import { deadLetterFor, deferredRecordFor, retryRecordFor, type DeadLetter, type SourceMessage } from '../retry/dead-letter.ts';
import { attemptOf, describeError, headerString, originOf, TRAWL_HEADERS, unfinishedOf, type DeadLetterReason } from '../retry/retry-headers.ts';
import { readEvent, type ConsumedEvent, type EventHandler } from './consumed-event.ts';
import type { ConsumerMetrics } from '../metrics/consumer-metrics.ts';
import type { DeliveryCounter } from './delivery-counter.ts';
import type { MessagePosition } from './delivery-store.ts';
import { isRetriable, contextFromHeaders, inRecordTrace, startProcessSpan } from '@trawl/base';
import { afterUnfinished, carriedForward, deliveryVerdict, FIRST_DELIVERY, rereadHistory, type DeliveryHistory } from './delivery-verdict.ts';

/** The first window of a partition after it was taken on: messages a previous member may have run. */
export interface RereadWindow {
  /** Where the window ends (exclusive): the partition's start when the group never committed it. */
  readonly end: Promise<bigint>;
}

export interface IncomingMessage {
  readonly topic: string;
  readonly partition: number;
  readonly message: KafkaMessage;
  /** Set when the message lies in its partition's re-read window. */
  readonly reread: RereadWindow | undefined;
}

export interface MessageProcessorOptions {
  readonly handler: EventHandler;
  readonly codec: EventCodec;
  readonly producer: EventProducer;
  readonly retryTiers: readonly RetryTier[];
  readonly deadLetterTopic: string;
  readonly onDeadLetter: ((deadLetter: DeadLetter) => Promise<void> | void) | undefined;
  readonly deliveries: DeliveryCounter;
  /** Aborted when the consumer stops: outage waits (a registry that does not answer) end at once, nothing having started. */
  readonly stopping: AbortSignal;
  readonly backoff: BackoffOptions;
  readonly metrics: ConsumerMetrics;
  readonly logger: Logger;
}

type Decoded = { readonly ok: true; readonly event: DecodedEvent } | { readonly ok: false; readonly error: unknown };

/** A message's place in its partition's hand-off order (startInOrder): its handler starts after `after`, and says so with `handedOff`. */
export interface HandlerTurn {
  readonly after: Promise<void>;
  readonly handedOff: () => void;
}

export class MessageProcessor {
  constructor(private readonly o: MessageProcessorOptions) {}

  /** Never rejects. With a `turn`, the handler starts only once the partition's previous message has been handed off. */
  async process(incoming: IncomingMessage, signal: AbortSignal, turn?: HandlerTurn): Promise<boolean> {
    try {
      return await this.run(incoming, signal, turn);
    } catch (err) {
      // A bug in this file, not in the message: keep the message uncommitted and say so loudly.
      this.o.logger.error({ err, topic: incoming.topic, partition: incoming.partition, offset: incoming.message.offset }, 'message processing crashed');
      return false;
    } finally {
      // However it ended (handled, dead-lettered, given up), the next message's turn comes — not
      // before the previous one's, which a message that never reached its handler did not wait for.
      if (turn) void turn.after.then(turn.handedOff);
    }
  }

  private async run(incoming: IncomingMessage, signal: AbortSignal, turn: HandlerTurn | undefined): Promise<boolean> {
    const source = sourceOf(incoming);
    const attempt = attemptOf(incoming.message.headers);
    const decoded = await this.decode(source, signal);
    if (!decoded) return false;
    // Before anything that waits on later messages (a re-read's turn), so no two wait on each other.
    if (turn) {
      await turn.after;
      if (signal.aborted) return false;
    }
    if (!decoded.ok) return this.deadLetter(source, { reason: 'undecodable', attempts: attempt, error: decoded.error }, signal);

    const event = readEvent(decoded.event, source.topic, source.partition, incoming.message);
    const origin = originOf(source.headers, source);
    const deliveries = this.o.deliveries;
    // Known once there is something to count: a re-read, or a failure.
    let history: DeliveryHistory | undefined;
    // Where this message's deliveries are recorded, once there is something to record (a re-read).
    let at: MessagePosition | undefined;
    let isolated = false;
    let release: (() => void) | undefined;
    if (incoming.reread && BigInt(source.offset) < (await incoming.reread.end)) {
      at = { topic: source.topic, partition: source.partition, offset: BigInt(source.offset) };
      history = rereadHistory(unfinishedOf(source.headers), await deliveries.recorded(at, AbortSignal.any([signal, this.o.stopping])));
      if (signal.aborted || this.o.stopping.aborted) return false;
      const verdict = deliveryVerdict(history, deliveries.max);
      if (verdict.kind === 'poison') return this.poison(source, { attempts: attempt, unfinished: verdict.unfinished, cause: undefined, event: decoded.event, at }, signal);
      this.o.metrics.reread(verdict.isolated);
      isolated = verdict.isolated;
      // A counted delivery holds its turn from its record until its outcome is durable.
      release = await deliveries.turn(isolated);
      if (signal.aborted) {
        release();
        return false;
      }
    }

    let recordedHere = 0;
    let backoff: Backoff | undefined; // only failures need one
    try {
      for (let current = attempt; ; ) {
        const started = performance.now();
        try {
          // Recorded before the handler runs: a process that dies in it leaves no chance after.
          if (at && history!.here + 1 !== recordedHere) {
            if (!(await deliveries.record(at, history!.here + 1, signal))) return false;
            recordedHere = history!.here + 1;
          }
          // Each attempt continues the trace the record carries (a span where spans are recorded): what the handler emits joins it.
          const traced = () => {
            const parent = contextFromHeaders(source.headers);
            const span = startProcessSpan(this.o.metrics.consumer, source.topic, source.partition, source.offset, event.name, event.value, parent);
            span.setAttribute('trawl.attempt', current);
            return { span, parent };
          };
          await inRecordTrace(source.headers, traced, async () => {
            const handled = this.o.handler({ ...event, origin, attempt: current, signal } as ConsumedEvent);
            turn?.handedOff();
            return handled;
          });
          this.o.metrics.processed(source.topic, performance.now() - started);
          return at ? await this.finished(at, isolated) : true;
        } catch (err) {
          if (signal.aborted) return false;
          if (err instanceof DeferredError) {
            // Not a failure and not a delivery without an outcome: parked until due, counting nothing.
            const route = routeDeferral(err.dueAt, this.o.retryTiers);
            this.o.metrics.deferred(source.topic);
            if (!route.tier) {
              await sleep(Math.max(0, route.dueAt - Date.now()), signal);
              if (signal.aborted) return false;
              continue;
            }
            const unfinished = carriedForward(history ?? FIRST_DELIVERY(unfinishedOf(source.headers)));
            const record = deferredRecordFor(source, route.tier.topic, { attempt: current, dueAt: route.dueAt, unfinished });
            if (!(await this.sendUntilAcknowledged(record, signal))) return false;
            return await this.finished(at, isolated);
          }
          const { errorClass, message } = describeError(err);
          this.o.metrics.handlerFailed(errorClass);
          const where = { topic: source.topic, partition: source.partition, offset: source.offset, attempt: current, errorClass, error: message };
          history ??= FIRST_DELIVERY(unfinishedOf(source.headers));
          let carried = carriedForward(history);
          if (err instanceof BudgetExceededError) {
            // No outcome: this delivery counts as one more that did not end.
            const verdict = afterUnfinished(history, deliveries.max);
            this.o.metrics.budgetOverrun();
            if (verdict.kind === 'poison') {
              return await this.poison(source, { attempts: current, unfinished: verdict.unfinished, cause: err, event: decoded.event, at }, signal);
            }
            history = verdict.history;
            carried = verdict.unfinished;
            // A retry in place runs here again: from now on its deliveries are recorded.
            at ??= { topic: source.topic, partition: source.partition, offset: BigInt(source.offset) };
          }
          const route = routeFailure(err, current, this.o.retryTiers);
          if (route.kind === 'in-place') {
            const delay = (backoff ??= new Backoff(this.o.backoff)).next();
            this.o.logger.warn({ ...where, retryInMs: delay }, 'handler failed; retrying in place');
            await sleep(delay, signal);
            if (signal.aborted) return false;
            this.o.metrics.retried(source.topic, 'in-place');
            current = route.nextAttempt;
            continue;
          }
          if (route.kind === 'retry-tier') {
            this.o.logger.debug({ ...where, tier: route.tier.topic, dueAt: route.dueAt }, 'handler failed; forwarding to retry tier');
            const record = retryRecordFor(source, route.tier.topic, { attempt: route.nextAttempt, dueAt: route.dueAt, unfinished: carried }, err);
            if (!(await this.sendUntilAcknowledged(record, signal))) return false;
            this.o.metrics.retried(source.topic, route.tier.topic);
            return await this.finished(at, isolated);
          }
          if (!(await this.deadLetter(source, { reason: route.reason, attempts: current, error: err, event: decoded.event }, signal))) return false;
          return await this.finished(at, isolated);
        }
      }
    } finally {
      release?.();
    }
  }

  /** The message has an outcome: a counted one forgets its count (at once for a suspect: before the next suspect runs). */
  private async finished(at: MessagePosition | undefined, isolated: boolean): Promise<true> {
    if (at) {
      if (isolated) await this.o.deliveries.forgetNow(at);
      else this.o.deliveries.forget(at);
    }
    return true;
  }

  /**
   * Dead-letters a message delivered too often without an outcome, with the last known cause: the
   * budget it overran, else the failure an earlier tier recorded in its headers, else none (its
   * process died while it ran).
   */
  private async poison(
    source: SourceMessage,
    info: { readonly attempts: number; readonly unfinished: number; readonly cause: unknown; readonly event: DecodedEvent; readonly at: MessagePosition | undefined },
    signal: AbortSignal,
  ): Promise<boolean> {
    const earlier = headerString(source.headers, TRAWL_HEADERS.errorMessage);
    const cause =
      info.cause !== undefined
        ? `last: ${describeError(info.cause).message}`
        : earlier !== undefined
          ? `its consumer's process ended while it ran; before that: ${headerString(source.headers, TRAWL_HEADERS.errorClass) ?? 'Error'}: ${earlier}`
          : "its consumer's process ended while it ran (a crash, a kill, or an event loop blocked past the watchdog)";
    const error = new PoisonMessageError(`delivered ${info.unfinished} times without an outcome; ${cause}`, info.cause === undefined ? undefined : { cause: info.cause });
    this.o.metrics.poisoned(source.topic);
    const finished = await this.deadLetter(source, { reason: 'poison', attempts: info.attempts, error, event: info.event }, signal);
    if (finished && info.at) await this.o.deliveries.forgetNow(info.at);
    return finished;
  }

  /** The decoded event, a decoding failure to dead-letter, or undefined when given up meanwhile. */
  private async decode(source: SourceMessage, signal: AbortSignal): Promise<Decoded | undefined> {
    let backoff: Backoff | undefined;
    for (;;) {
      try {
        return { ok: true, event: await this.o.codec.decode(source.value) };
      } catch (err) {
        if (err instanceof UndecodableMessageError || !isRetriable(err)) return { ok: false, error: err };
        this.o.metrics.decodeRetried(describeError(err).code ?? describeError(err).errorClass);
        const delay = (backoff ??= new Backoff(this.o.backoff)).next();
        this.o.logger.warn({ err, topic: source.topic, partition: source.partition, offset: source.offset, retryInMs: delay }, 'cannot decode yet (registry?); waiting');
        await sleep(delay, AbortSignal.any([signal, this.o.stopping]));
        if (signal.aborted || this.o.stopping.aborted) return undefined;
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
    if (this.o.onDeadLetter) return this.runHook(deadLetter, signal);
    return true;
  }

  /**
   * Runs the app's dead-letter hook (the worker emits PageFailed there: the outcome a job waits
   * for). The dead letter is already written, and the message is not finished until the hook
   * succeeded, so a crash before then re-delivers it: hooks must be idempotent (deterministic event
   * ids). A failure is retried with backoff whatever its flag — a hook that says "never" would
   * otherwise lose the outcome for good; it is logged as an error and counted
   * (trawl_consumer_dead_letter_hook_failures_total), and holds its partition's commit point, so a
   * hook that keeps failing shows as lag until it is fixed. False when given up (signal).
   */
  private async runHook(deadLetter: DeadLetter, signal: AbortSignal): Promise<boolean> {
    const backoff = new Backoff(this.o.backoff);
    for (;;) {
      try {
        await this.o.onDeadLetter!(deadLetter);
        return true;
      } catch (err) {
        const delay = backoff.next();
        const where = { err, topic: deadLetter.topic, partition: deadLetter.partition, offset: deadLetter.offset, reason: deadLetter.reason, retryInMs: delay };
        this.o.metrics.deadLetterHookFailed();
        if (isRetriable(err)) this.o.logger.warn(where, 'onDeadLetter failed; retrying');
        else this.o.logger.error(where, 'onDeadLetter failed with a non-retriable error; retrying, since the outcome it owes would otherwise be lost');
        await sleep(delay, signal);
        if (signal.aborted) return false;
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
