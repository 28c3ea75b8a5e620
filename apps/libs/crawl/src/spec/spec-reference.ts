/**
 * A job's spec by reference. FetchRequested names its job's spec by a content hash (`spec_hash`)
 * rather than copying it (a spec can be ~100 KB; a job requests many pages): the frontier stores the
 * spec under that hash (Postgres, crawl_specs) before producing, and the worker loads it by hash.
 * Events written before the reference existed carry the spec inline, and still work.
 */
import { createHash } from 'node:crypto';
import type { CrawlSpec, FetchRequested } from '@trawl/schemas';

/** A FetchRequested with its spec at hand, as the worker processes it. */
export type FetchWithSpec = FetchRequested & { readonly spec: CrawlSpec };

/** JSON with object keys sorted: the same spec gives the same text whatever order its fields were built in. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

const hashes = new WeakMap<CrawlSpec, string>();

/** SHA-256 (hex) of the spec's canonical JSON; remembered per spec object, since a job's spec is hashed for every page it requests. */
export function specHash(spec: CrawlSpec): string {
  let hash = hashes.get(spec);
  if (hash === undefined) {
    hash = createHash('sha256').update(canonicalJson(spec)).digest('hex');
    hashes.set(spec, hash);
  }
  return hash;
}

/** The request with the spec it carries inline; throws when it carries only a reference (resolve that first). */
export function withInlineSpec(request: FetchRequested): FetchWithSpec {
  if (request.spec === null) throw new TypeError(`FetchRequested ${request.fetch_id} carries its spec by reference (${request.spec_hash ?? 'no hash'}), not inline`);
  return request as FetchWithSpec;
}

/** The request as it goes on the wire: the spec replaced by its hash. */
export function bySpecReference(request: FetchWithSpec): FetchRequested {
  return { ...request, spec: null, spec_hash: specHash(request.spec) };
}
