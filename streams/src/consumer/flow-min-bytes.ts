/**
 * A fetch's minimum bytes that follows the flow (a projection's `adaptiveFetchMinBytes`): wait at
 * the broker for `target` bytes only while the stream brings them about as fast as the wait lasts.
 *
 * Why: a projection's fetch waits for 64 KiB or `maxWaitMs` (projection-options.ts) so that a
 * steady crawl's events share transactions. A trickle (one scrape's JobDispatched, a crawl's first
 * and last pages) never fills 64 KiB, so each of its events waited the whole `maxWaitMs` at every
 * hop: ~50 ms of a `POST /scrape` on the frontier alone. Here the member counts the bytes it was
 * handed over the last `windowMs`; while they come slower than half of `target` per `maxWaitMs`,
 * the next fetch asks for 1 byte and returns as soon as anything is there. A full-pace flow keeps
 * `target` (its fetches fill it within the wait anyway), so its batches are what they were.
 * The wait itself is unchanged: an idle member polls the broker as often as before. The price is
 * a middling flow's batching: below half of `target` per wait, events come nearly one by one.
 *
 * How kafkajs takes it: its consumer group keeps `minBytes` as given and writes it into every
 * fetch request with `Buffer#writeInt32BE`, which converts its argument with `+value` — so an
 * object whose `valueOf()` answers the current figure is read afresh at each fetch (kafkajs 2.2.4,
 * the version the fast paths pin; flow-min-bytes.test.ts holds the encoding to it).
 */
export class FlowMinBytes {
  private readonly seen: { at: number; bytes: number }[] = [];
  private total = 0;

  constructor(
    readonly target: number,
    private readonly maxWaitMs: number,
    private readonly windowMs = 1_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Bytes a fetch handed over (one partition's batch). */
  observe(bytes: number): void {
    const at = this.now();
    this.seen.push({ at, bytes });
    this.total += bytes;
    this.prune(at);
  }

  /** What the next fetch asks for: `target` while the flow fills half of it per wait, else 1. */
  current(): number {
    this.prune(this.now());
    const perWait = (this.total * this.maxWaitMs) / this.windowMs;
    return perWait * 2 >= this.target ? this.target : 1;
  }

  valueOf(): number {
    return this.current();
  }

  toJSON(): string {
    return `adaptive (${this.target} B while the flow fills it)`;
  }

  private prune(at: number): void {
    while (this.seen.length > 0 && this.seen[0]!.at <= at - this.windowMs) this.total -= this.seen.shift()!.bytes;
  }
}

/** The bytes of a fetched batch's messages (keys and values), as the broker sent them. */
export function batchBytes(messages: readonly { readonly key?: Buffer | null; readonly value: Buffer | null }[]): number {
  let n = 0;
  for (const m of messages) n += (m.value?.length ?? 0) + (m.key?.length ?? 0);
  return n;
}
