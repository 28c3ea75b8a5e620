/**
 * The API keys every instance knows, in memory: for each active key its SHA-256 (hex) and its
 * owner — never a key, never a revoked one. Authentication is a map lookup, so a made-up key
 * costs Postgres nothing and a valid key waits for nothing (plugins/auth.ts).
 *
 * Kept current by two means, and correct because of how they meet:
 * - `apply` takes a change as its notification announces it (the key's state after the change).
 *   Notifications arrive in commit order, so the last one heard for a key is its state.
 * - `resync` reloads everything (at start, on every reconnect of the listening connection — what
 *   was announced while it was down is lost — and periodically in case anything else was missed).
 *   It reads shard by shard, page by page, each page a statement of its own: a page may predate a
 *   change heard meanwhile. So every change heard while a resync runs is laid again over each
 *   shard the resync swaps in: a notification heard is never undone by an older read. (A read may
 *   also be newer than a notification still on its way; that notification then briefly rolls
 *   the key back until the next one, already sent, arrives.) A resync asked for while one runs
 *   runs again after it, since the running one may have read past the change that asked.
 *
 * Memory: the keys are 16 maps by the first hex digit of their hash. An entry is a 64-character
 * string, the owner's id and the map's slot: ~150 bytes of heap (measured by bench/key-index.ts:
 * 14.8 MB for 100,000 keys, 141 MB for a million). There is no cap: a key left out would be
 * refused, which is what this replaces. A resync builds one shard's new map at a time and swaps
 * it in, so it holds one sixteenth of the index twice, not all of it, and yields between pages
 * (a million keys: 6.6 s of background reading, the first load 11.5 s before the app is ready).
 * Past a few hundred thousand keys the heap ceiling (TRAWL_HEAP_CEILING_MB) must be raised.
 */
import type { IndexedKey } from '../data/api-keys.ts';

/** A key's state after a change, as its notification says it. */
export interface KeyState {
  readonly hash: string;
  readonly userId: string;
  readonly active: boolean;
}

export interface KeyIndexOptions {
  /** The active keys whose hash starts with `prefix` (a hex digit) and sorts after `after`, in hash order, at most `limit`. */
  readonly loadPage: (prefix: string, after: string | null, limit: number) => Promise<readonly IndexedKey[]>;
  /** A key stopped being good for its owner (revoked, deleted, or given to another user): what it has open must end. */
  readonly onRemoved?: (hash: string) => void;
  /** A resync swapped its last shard in; keys it dropped were not announced one by one. */
  readonly onResynced?: () => void;
  /** Rows per page of a resync. */
  readonly pageSize?: number;
}

const HEX = '0123456789abcdef';
const DEFAULT_PAGE_SIZE = 5_000;

function shardOf(hash: string): number {
  return HEX.indexOf(hash.charAt(0));
}

export class KeyIndex {
  private readonly shards: Map<string, string>[] = Array.from({ length: HEX.length }, () => new Map());
  /** Changes heard since the running resync began; undefined when none runs. */
  private heard: Map<string, KeyState> | undefined;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private completed = 0;
  private readonly pageSize: number;

  constructor(private readonly options: KeyIndexOptions) {
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  }

  /** The owner of the key with this hash, if it is active. */
  userOf(hash: string): string | undefined {
    return this.shards[shardOf(hash)]?.get(hash);
  }

  knows(hash: string): boolean {
    return this.userOf(hash) !== undefined;
  }

  /** Active keys indexed. */
  get size(): number {
    let n = 0;
    for (const shard of this.shards) n += shard.size;
    return n;
  }

  /** Resyncs completed, the first load included. */
  get resyncs(): number {
    return this.completed;
  }

  /** A change as announced: takes effect now, and over whatever a running resync read before it. */
  apply(change: KeyState): void {
    const shard = this.shards[shardOf(change.hash)];
    if (!shard) return;
    this.heard?.set(change.hash, change);
    const before = shard.get(change.hash);
    put(shard, change);
    if (!change.active || (before !== undefined && before !== change.userId)) this.options.onRemoved?.(change.hash);
  }

  /**
   * Reloads every key. Rejects when a page cannot be read: shards swapped in by then stay (they
   * are current), the others keep what they had.
   */
  resync(): Promise<void> {
    if (!this.running) {
      this.running = this.load().finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.resync();
      });
    return this.queued;
  }

  private async load(): Promise<void> {
    const heard = new Map<string, KeyState>();
    this.heard = heard;
    try {
      for (let s = 0; s < this.shards.length; s++) {
        const next = new Map<string, string>();
        let after: string | null = null;
        for (;;) {
          const page = await this.options.loadPage(HEX[s]!, after, this.pageSize);
          for (const key of page) next.set(key.hash, key.userId);
          if (page.length < this.pageSize) break;
          after = page[page.length - 1]!.hash;
        }
        for (const change of heard.values()) if (shardOf(change.hash) === s) put(next, change);
        this.shards[s] = next;
      }
      this.completed++;
    } finally {
      this.heard = undefined;
    }
    this.options.onResynced?.();
  }
}

function put(shard: Map<string, string>, change: KeyState): void {
  if (change.active) shard.set(change.hash, change.userId);
  else shard.delete(change.hash);
}
