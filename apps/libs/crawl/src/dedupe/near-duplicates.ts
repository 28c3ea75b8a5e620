/**
 * Near-duplicate pages of a job (PageFetched.near_duplicate_of): a page whose main-text simhash is
 * within `maxDistance` bits of a page this worker already kept for the same job and host is a
 * near-duplicate of that page (a print view, a session-id or tracking-parameter mirror, a sort
 * order that changes nothing). The decision is the worker's, made as the page is parsed, because
 * only here can the page's items still be held back: they are produced on `trawl.items` before the
 * PageFetched that a frontier or a projector would see.
 *
 * Where the seen hashes live, and what that costs: fetches are keyed by URL host on `trawl.fetch`,
 * so every page of one host of a job goes through one partition, consumed by one worker at a time.
 * The hashes are kept per (job, host) in that worker's memory, beside the pages they are compared
 * with. What it misses, never the other way round: near-duplicates on two hosts, and a page whose
 * original was seen before its partition moved to this worker (a rebalance, a restart) — those are
 * kept as pages of their own. A decision is recorded in the event, so a replay reproduces it.
 *
 * Items are never lost: a near-duplicate's items are held back only when they are the original's
 * (same fields, same order: `itemsDigest`); a near-duplicate that shows other items (a product
 * variant whose price alone differs) keeps them, and is still marked.
 *
 * Bounded: at most `maxPagesPerHost` hashes per (job, host), at most `maxGroups` groups and
 * `maxPages` hashes in all (~100 bytes each with the URL: 20 MB at the default); past them the least
 * recently used groups go, and a page past its group's bound is compared but not remembered.
 */
import { hash } from 'node:crypto';
import { popcount32, simhashWords } from './simhash.ts';

export interface NearDuplicateOptions {
  /** Bits (0–64) two simhashes may differ by and still be near-duplicates; negative turns marking off. */
  readonly maxDistance: number;
  readonly maxPagesPerHost?: number;
  readonly maxGroups?: number;
  /** Hashes kept in all groups together. */
  readonly maxPages?: number;
}

export interface PageSeen {
  readonly url: string;
  readonly simhash: string;
  /** What the page's items were (itemsDigest), to tell whether a near-duplicate shows the same ones. */
  readonly items: string;
}

export interface NearDuplicateVerdict {
  /** The URL of the page this one is a near-duplicate of; null: a page of its own (now remembered). */
  readonly of: string | null;
  /** Its items are the original's: hold them back. */
  readonly sameItems: boolean;
}

interface Kept {
  readonly url: string;
  readonly hi: number;
  readonly lo: number;
  readonly items: string;
}

export const DEFAULT_NEAR_DUPLICATE_DISTANCE = 3;

export class NearDuplicates {
  private readonly groups = new Map<string, Kept[]>();
  private readonly maxPerGroup: number;
  private readonly maxGroups: number;
  private readonly maxTotal: number;
  private total = 0;

  constructor(private readonly options: NearDuplicateOptions) {
    this.maxPerGroup = options.maxPagesPerHost ?? 10_000;
    this.maxGroups = options.maxGroups ?? 2_000;
    this.maxTotal = options.maxPages ?? 200_000;
  }

  get enabled(): boolean {
    return this.options.maxDistance >= 0;
  }

  /** Compares the page with the ones kept for its job and host; remembers it when it is a page of its own. */
  check(jobId: string, host: string, page: PageSeen): NearDuplicateVerdict {
    if (!this.enabled) return { of: null, sameItems: false };
    const key = `${jobId}\u0000${host}`;
    let kept = this.groups.get(key);
    if (kept) {
      // Most recently used last, so the first key is the one to drop.
      this.groups.delete(key);
      this.groups.set(key, kept);
    } else {
      kept = [];
      this.groups.set(key, kept);
    }
    const [hi, lo] = simhashWords(page.simhash);
    for (const k of kept) {
      if (k.url === page.url) continue; // the same page again (a retry): not its own duplicate
      if (popcount32(k.hi ^ hi) + popcount32(k.lo ^ lo) <= this.options.maxDistance) return { of: k.url, sameItems: k.items === page.items };
    }
    if (kept.length < this.maxPerGroup && !kept.some((k) => k.url === page.url)) {
      kept.push({ url: page.url, hi, lo, items: page.items });
      this.total++;
    }
    this.evict(key);
    return { of: null, sameItems: false };
  }

  /** Drops the least recently used groups (never `current`) while past the bounds. */
  private evict(current: string): void {
    for (const [key, kept] of this.groups) {
      if (this.groups.size <= this.maxGroups && this.total <= this.maxTotal) return;
      if (key === current) continue;
      this.groups.delete(key);
      this.total -= kept.length;
    }
  }

  /** Forgets a job (it ended). */
  forget(jobId: string): void {
    const prefix = `${jobId}\u0000`;
    for (const [key, kept] of this.groups) {
      if (!key.startsWith(prefix)) continue;
      this.groups.delete(key);
      this.total -= kept.length;
    }
  }
}

/** TRAWL_NEAR_DUPLICATE_DISTANCE: bits (0–64, default 3); `off` turns near-duplicate marking off. */
export function nearDuplicateDistanceFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TRAWL_NEAR_DUPLICATE_DISTANCE?.trim();
  if (raw === undefined || raw === '') return DEFAULT_NEAR_DUPLICATE_DISTANCE;
  if (raw.toLowerCase() === 'off') return -1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 64) throw new RangeError(`TRAWL_NEAR_DUPLICATE_DISTANCE must be a whole number of bits from 0 to 64, or off, not ${JSON.stringify(raw)}`);
  return n;
}

/** A digest of a page's items as they read (fields by name, in page order), URL left out: equal for the same items shown on two pages. */
export function itemsDigest(items: readonly { readonly fields: Readonly<Record<string, string>> }[]): string {
  let text = '';
  for (const item of items) {
    text += '\u0001';
    for (const name of Object.keys(item.fields).sort()) text += `${name}\u0000${item.fields[name]!}\u0000`;
  }
  return hash('sha256', text, 'hex').slice(0, 32);
}
