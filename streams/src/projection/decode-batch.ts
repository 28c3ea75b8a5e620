/**
 * Decodes one partition's batch for a projection: the events it handles, and dead letters for
 * what can never be decoded (bad magic byte, a body Avro cannot read). Events it does not handle
 * (canHandle) are left out with their bodies unread. A registry that cannot be reached,
 * or answers 404 for a schema id, throws instead: the whole batch is retried, since an outage says
 * nothing about the events.
 */
import type { KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import type { EventName } from '@trawl/schemas';
import { isRetriable } from '@trawl/base';
import { UndecodableMessageError } from '../errors.ts';
import type { EventCodec } from '../registry/event-codec.ts';
import type { RawMessage } from '../producer/event-producer.ts';
import { deadLetterFor } from '../retry/dead-letter.ts';
import { describeError, headerStrings } from '../retry/retry-headers.ts';
import type { ProjectionMetrics } from '../metrics/projection-metrics.ts';
import { readEvent } from '../consumer/consumed-event.ts';
import type { ProjectedEvent, ProjectedMessage } from './projection-options.ts';

export interface DecodeBatchDeps {
  readonly codec: EventCodec;
  /** The events the projection handles; undefined: all. */
  readonly handles: ReadonlySet<EventName> | undefined;
  readonly deadLetterTopic: string;
  readonly metrics: ProjectionMetrics;
  readonly logger: Logger;
}

export async function decodeBatch(
  deps: DecodeBatchDeps,
  topic: string,
  partition: number,
  messages: readonly KafkaMessage[],
): Promise<{ events: ProjectedEvent[]; deadLetters: RawMessage[] }> {
  const events: ProjectedEvent[] = [];
  const deadLetters: RawMessage[] = [];
  for (const m of messages) {
    try {
      const d = deps.handles ? await deps.codec.decodeIf(m.value, deps.handles) : await deps.codec.decode(m.value);
      if (d) events.push(readEvent(d, topic, partition, m));
    } catch (err) {
      if (!(err instanceof UndecodableMessageError) && isRetriable(err)) {
        const { code, errorClass } = describeError(err);
        deps.metrics.decodeRetried(code ?? errorClass);
        throw err;
      }
      deps.logger.warn({ err, topic, partition, offset: m.offset }, 'undecodable event; dead-lettering it');
      const source = { topic, partition, offset: m.offset, key: m.key ?? null, value: m.value, headers: m.headers };
      deadLetters.push(deadLetterFor(source, { deadLetterTopic: deps.deadLetterTopic, reason: 'undecodable', attempts: 1, error: err }).record);
    }
  }
  return { events, deadLetters };
}

/** A raw projection's batch: the messages as they are, undecoded, and nothing dead-lettered (runRawProjection). */
export function rawBatch(topic: string, partition: number, messages: readonly KafkaMessage[]): { events: ProjectedEvent[]; deadLetters: RawMessage[] } {
  const raw: ProjectedMessage[] = messages.map((m) => ({
    topic,
    partition,
    offset: m.offset,
    key: m.key ?? null,
    value: m.value ?? null,
    headers: headerStrings(m.headers),
    timestamp: m.timestamp,
  }));
  // The batch machinery only reads `offset`; `apply` gets these as they are.
  return { events: raw as unknown as ProjectedEvent[], deadLetters: [] };
}
