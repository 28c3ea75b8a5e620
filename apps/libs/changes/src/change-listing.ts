/**
 * The changes of one kind of thing (pages, items), counted whole and listed up to a bound: the
 * listing's memory (and the answer's size) is a function of the bounds, never of the runs' size.
 *
 * Entries arrive in the listing's order; each kind's list is a prefix of that kind's entries, cut
 * at `limit` entries or at `maxListBytes` (the entries' estimated JSON size), whichever comes first
 * — once an entry does not fit, nothing after it of that kind is listed, so a client can trust a
 * list to be "the first N". Counts go on; `truncated` says a list was cut.
 */

export interface ListBounds {
  /** Entries listed per kind at most. */
  readonly limit: number;
  /** Estimated JSON bytes listed per kind at most. */
  readonly maxListBytes: number;
}

export interface ChangeLists<K extends string, T> {
  readonly counts: Readonly<Record<K, number>>;
  readonly lists: Readonly<Record<K, readonly T[]>>;
}

export class ChangeListing<K extends string, T extends { readonly kind: K }> {
  private readonly counts = {} as Record<K, number>;
  private readonly lists = {} as Record<K, T[]>;
  private readonly bytes = {} as Record<K, number>;
  private readonly closed = new Set<K>();

  constructor(
    private readonly kinds: readonly K[],
    private readonly bounds: ListBounds,
    private readonly sizeOf: (entry: T) => number,
  ) {
    for (const kind of kinds) {
      this.counts[kind] = 0;
      this.lists[kind] = [];
      this.bytes[kind] = 0;
    }
  }

  /** Whether an entry of `kind` would still be listed (else the caller need only count it). */
  listing(kind: K): boolean {
    return !this.closed.has(kind);
  }

  /** Counts `entry`, and lists it while its kind's list has room. */
  add(entry: T): void {
    const { kind } = entry;
    this.counts[kind]++;
    if (this.closed.has(kind)) return;
    const size = this.sizeOf(entry);
    if (this.lists[kind].length >= this.bounds.limit || this.bytes[kind] + size > this.bounds.maxListBytes) {
      this.closed.add(kind);
      return;
    }
    this.lists[kind].push(entry);
    this.bytes[kind] += size;
  }

  /** Counts `n` entries of a kind no longer listed, without building them. */
  countOnly(kind: K, n: number): void {
    if (!this.closed.has(kind)) throw new Error(`entries of kind ${kind} are still listed: add them`);
    this.counts[kind] += n;
  }

  /** A list holds fewer entries than its kind counts. */
  get truncated(): boolean {
    return this.kinds.some((kind) => this.counts[kind] > this.lists[kind].length);
  }

  result(): ChangeLists<K, T> {
    return { counts: { ...this.counts }, lists: { ...this.lists } };
  }
}

/** The length of `value` as JSON, a cheap stand-in for its bytes (within a factor for non-ASCII text). */
export function jsonLength(value: unknown): number {
  return value === null || value === undefined ? 4 : JSON.stringify(value).length;
}
