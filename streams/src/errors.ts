import { TrawlError } from '@trawl/schemas';

/**
 * Errors of the streams package. Each carries a stable `code`, a `retriable` flag that the
 * consumer runner uses to choose between a retry tier and the dead-letter topic (`isRetriable` of
 * @trawl/base reads it), and its `cause`.
 */
export abstract class StreamsError extends TrawlError {}

/** Thrown at start-up when the topics cannot be made to match the catalogue. */
export class ProvisioningError extends StreamsError {
  readonly code = 'TRAWL_PROVISIONING';
  readonly retriable = false;
}

/**
 * A message that cannot be decoded (bad magic byte, unknown schema id, corrupt body). Never
 * retried: it goes to the dead-letter topic at once, and the partition moves on.
 */
export class UndecodableMessageError extends StreamsError {
  readonly code = 'TRAWL_UNDECODABLE';
  readonly retriable = false;
}

/** The schema registry refused or could not answer a registration or lookup. */
export class SchemaRegistryError extends StreamsError {
  readonly code = 'TRAWL_SCHEMA_REGISTRY';
  constructor(
    message: string,
    readonly retriable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The registry answered 404 for a schema id. Retried with backoff, never dead-lettered: the bytes
 * may be fine and the registry wrong (restored empty, a wrong URL path, a proxy during a deploy, a
 * replica behind its leader). `registryServesKnownIds` says whether the registry still answered
 * for an id this process had resolved before (undefined when it had none to ask about).
 */
export class SchemaNotFoundError extends StreamsError {
  readonly code = 'TRAWL_SCHEMA_NOT_FOUND';
  readonly retriable = true;
  constructor(
    message: string,
    readonly registryServesKnownIds?: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A handler's way to say "try again later": the message goes to the next retry tier. */
export class RetriableError extends StreamsError {
  readonly code: string = 'TRAWL_RETRIABLE';
  readonly retriable = true;
}

/**
 * A handler's way to say "not yet, and not my fault": the message may run at `dueAt` (epoch ms). It
 * is parked in a retry tier until then — the same attempt, not a failure, not a delivery without an
 * outcome — and the consumer moves on. A worker throws it for a host that asks it to wait.
 */
export class DeferredError extends StreamsError {
  readonly code = 'TRAWL_DEFERRED';
  readonly retriable = true;
  constructor(
    message: string,
    readonly dueAt: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A handler's way to say "this will never work": the message goes to the dead-letter topic. */
export class NonRetriableError extends StreamsError {
  readonly code: string = 'TRAWL_NON_RETRIABLE';
  readonly retriable = false;
}

/**
 * An event or record over the producer's size limit (TRAWL_MAX_EVENT_BYTES), refused before it is
 * sent: the broker would refuse it too, every time. Names the event and its size.
 */
export class EventTooLargeError extends StreamsError {
  readonly code = 'TRAWL_EVENT_TOO_LARGE';
  readonly retriable = false;
  constructor(
    message: string,
    readonly details: { readonly event?: string; readonly eventId?: string; readonly topic?: string; readonly bytes?: number; readonly limit?: number } = {},
  ) {
    super(message);
  }
}

/**
 * A unit of work was stopped from outside after its wall-clock budget (the worker's page budget).
 * The delivery has no outcome: it is retried like any retriable failure and counts towards the
 * message's deliveries without an outcome, so one that never ends becomes poison.
 */
export class BudgetExceededError extends StreamsError {
  readonly code = 'TRAWL_BUDGET_EXCEEDED';
  readonly retriable = true;
}

/**
 * The error of a poison dead letter: the message was delivered TRAWL_MAX_DELIVERIES times without
 * an outcome (its handler crashed or blocked the process, or overran its budget). Its `cause` is
 * the last known failure, when one is known.
 */
export class PoisonMessageError extends StreamsError {
  readonly code = 'TRAWL_POISON';
  readonly retriable = false;
}

/** An option given to a consumer, projection or helper is invalid: a programming error, thrown at start. */
export class InvalidOptionError extends StreamsError {
  readonly code = 'TRAWL_INVALID_OPTION';
  readonly retriable = false;
}

/**
 * A producer's delivery settings fall short of the topics it writes: acks below all or no
 * idempotence where `min.insync.replicas` > 1 (a write acknowledged by one broker would be lost
 * with it), or a topic whose `min.insync.replicas` exceeds its copies (every write refused).
 * Thrown at service start, before the first event.
 */
export class DeliveryConfigError extends StreamsError {
  readonly code = 'TRAWL_DELIVERY_CONFIG';
  readonly retriable = false;
}

/**
 * The installed kafkajs is not the version Trawl's kafkajs patches are written for
 * (kafka/kafkajs-version.ts): thrown when kafkajs is first loaded, so a process with an unknown
 * kafkajs never starts.
 */
export class KafkajsVersionError extends StreamsError {
  readonly code = 'TRAWL_KAFKAJS_VERSION';
  readonly retriable = false;
}

/** Thrown by the testing helpers when a part of the local stack does not answer; says which and what to do. */
export class StackUnavailableError extends StreamsError {
  readonly code = 'TRAWL_STACK_UNAVAILABLE';
  readonly retriable = true;
}
