/**
 * Reads the dead-letter topics. A DLQ is small and append-only, and streams offers no seekable
 * reader to apps, so each read takes the topics from the beginning (`readTopics`, a throw-away
 * group, nothing committed) and the result is shared for `cacheMs` by every request of every user;
 * concurrent requests wait for one read. Decoded values are kept by position: a dead letter never
 * changes, so each is decoded once per process.
 *
 * Cost: one group join plus the bytes of the topics per refresh. Fine for thousands of dead
 * letters; a DLQ of millions wants a projection of its own (a read model), not this.
 */
import { readTopics, type EventCodec, type Logger, type LoggedMessage, type createKafka } from '@trawl/streams';
import { toDeadLetter, type DeadLetter, type DeadLetterSource, type DecodedValue } from './dead-letter-entry.ts';

type Kafka = ReturnType<typeof createKafka>;

/** Kept newest-first; older ones beyond this are not shown (nor re-drivable from the console). */
export const MAX_DEAD_LETTERS = 20_000;

export interface DeadLetterReaderOptions {
  readonly kafka: () => Kafka;
  readonly codec: () => EventCodec;
  readonly topics: Readonly<Record<DeadLetterSource, string>>;
  readonly cacheMs?: number;
  readonly logger?: Logger;
}

export class DeadLetterReader {
  private cached: { at: number; letters: DeadLetter[] } | undefined;
  private reading: Promise<DeadLetter[]> | undefined;
  private readonly decoded = new Map<string, DecodedValue | null>();
  private readonly cacheMs: number;

  constructor(private readonly options: DeadLetterReaderOptions) {
    this.cacheMs = options.cacheMs ?? 3000;
  }

  /** Every dead letter, newest first. `fresh` skips the cache (after a re-drive, in tests). */
  async all(fresh = false): Promise<DeadLetter[]> {
    if (!fresh && this.cached && Date.now() - this.cached.at < this.cacheMs) return this.cached.letters;
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  async find(id: string): Promise<DeadLetter | undefined> {
    const hit = (await this.all()).find((d) => d.view.id === id);
    return hit ?? (await this.all(true)).find((d) => d.view.id === id);
  }

  private async read(): Promise<DeadLetter[]> {
    const started = Date.now();
    const sourceOf = new Map(Object.entries(this.options.topics).map(([source, topic]) => [topic, source as DeadLetterSource]));
    const messages = await readTopics(this.options.kafka(), [...sourceOf.keys()]);
    const letters: DeadLetter[] = [];
    for (const m of messages) letters.push(toDeadLetter(sourceOf.get(m.topic)!, m, await this.decode(m)));
    letters.sort((a, b) => (b.view.failed_at ?? '').localeCompare(a.view.failed_at ?? '') || b.view.id.localeCompare(a.view.id));
    const kept = letters.slice(0, MAX_DEAD_LETTERS);
    this.cached = { at: Date.now(), letters: kept };
    this.options.logger?.debug({ dead_letters: letters.length, ms: Date.now() - started }, 'read the dead-letter topics');
    return kept;
  }

  private async decode(m: LoggedMessage): Promise<DecodedValue | undefined> {
    const position = `${m.topic}/${m.partition}/${m.offset}`;
    if (this.decoded.has(position)) return this.decoded.get(position) ?? undefined;
    try {
      const e = await this.options.codec().decode(m.value);
      const out = { name: e.name, value: e.value as unknown as Record<string, unknown> };
      this.decoded.set(position, out);
      return out;
    } catch (err) {
      // Undecodable (often why it is a dead letter): shown to nobody, since no job names its owner.
      // A registry outage is retriable: not remembered, the next read tries again.
      if (!(err as { retriable?: boolean }).retriable) this.decoded.set(position, null);
      return undefined;
    }
  }
}
