/**
 * Ends the open streams of a revoked key. A request is authenticated once, but an SSE log stream
 * or a WebSocket feed lives for hours: without this, revoking a key stopped its REST calls while
 * its open sockets went on receiving the user's events.
 *
 * Every stream registers the hash of the key it was opened with. `revoked(hash)` ends a key's
 * streams at once: plugins/auth.ts calls it when the key index hears that the key was revoked.
 * Every `everyMs` a round also asks `stillGood` which of the watched hashes are still good, for
 * all of this instance's streams at once (auth.ts answers from the in-memory key index, without
 * a query), and ends the streams of a key found missing: one revoked between its stream's
 * authentication and its watch, or dropped by a resync of the index.
 *
 * A round that fails ends nothing: the streams keep going, and the next round tries again.
 * Ending every stream whenever the source of truth blinks would cost every user their feeds for
 * an outage that is not theirs.
 */

export interface KeyWatchOptions {
  /** How often the watched keys are looked up; at most this long passes between a revocation and the end of its streams (plus the query). */
  readonly everyMs: number;
  /** Which of these key hashes are still good: known and not revoked. */
  readonly stillGood: (hashes: readonly string[]) => Promise<ReadonlySet<string>>;
  /** A watched key was found revoked (before its streams are told). */
  readonly onRevoked?: (hash: string) => void;
  /** A round failed; the next one tries again. */
  readonly onError?: (err: unknown) => void;
}

/** Hashes per query: an `= ANY($1)` of this many is one index walk; more streams make more queries, not a huge one. */
const HASHES_PER_QUERY = 5_000;

export class KeyWatch {
  /** Key hash → what to call for each open stream of that key. */
  private readonly watchers = new Map<string, Set<() => void>>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;

  constructor(private readonly options: KeyWatchOptions) {}

  /** How many distinct keys have open streams. */
  get size(): number {
    return this.watchers.size;
  }

  /**
   * Calls `onRevoked` once when the key `hash` is found revoked; returns the function that stops
   * watching (call it when the stream ends, however it ends).
   */
  watch(hash: string, onRevoked: () => void): () => void {
    let streams = this.watchers.get(hash);
    if (!streams) this.watchers.set(hash, (streams = new Set()));
    // Its own function per stream, so that the same callback registered twice is two streams.
    const entry = () => onRevoked();
    streams.add(entry);
    this.arm();
    return () => {
      const current = this.watchers.get(hash);
      if (!current?.delete(entry)) return;
      if (current.size === 0) this.watchers.delete(hash);
      if (this.watchers.size === 0) this.disarm();
    };
  }

  /** The key is revoked (a request found it so): its streams end now. */
  revoked(hash: string): void {
    const streams = this.watchers.get(hash);
    if (!streams) return;
    this.watchers.delete(hash);
    if (this.watchers.size === 0) this.disarm();
    this.options.onRevoked?.(hash);
    for (const end of streams) {
      try {
        end();
      } catch (err) {
        this.options.onError?.(err);
      }
    }
  }

  /** One round: every watched key looked up; the streams of those no longer good end. A round in progress is shared. */
  check(): Promise<void> {
    this.round ??= this.runRound().finally(() => (this.round = undefined));
    return this.round;
  }

  close(): void {
    this.disarm();
    this.watchers.clear();
  }

  private async runRound(): Promise<void> {
    const hashes = [...this.watchers.keys()];
    try {
      for (let i = 0; i < hashes.length; i += HASHES_PER_QUERY) {
        const batch = hashes.slice(i, i + HASHES_PER_QUERY);
        const good = await this.options.stillGood(batch);
        for (const hash of batch) if (!good.has(hash)) this.revoked(hash);
      }
    } catch (err) {
      this.options.onError?.(err);
    }
  }

  private arm(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check(), this.options.everyMs);
    this.timer.unref();
  }

  private disarm(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
