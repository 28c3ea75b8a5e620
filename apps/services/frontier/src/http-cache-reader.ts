/**
 * The frontier's lookup in the HTTP cache: for the fetch requests a batch is about to produce, the
 * entries of their job's user in projector-pg's `http_cache` read model (one row per user and
 * normalised URL: the page's stored body, validators, final URL and when it was fetched), put on
 * FetchRequested.cached for the worker, which reuses, revalidates or ignores them (cache-plan.ts in
 * @trawl/crawl).
 *
 * Why here and not in the worker: the frontier already runs a Postgres transaction per batch and
 * knows each job's user, so a batch of new requests costs one indexed query; the worker stays
 * stateless (it reads no read model, and needs no user in the request), and a retried request
 * carries the entry it was issued with. What it costs: an entry is as fresh as projector-pg's
 * projection when the request is issued, so a page fetched moments before by another job of the
 * user may not be in it yet (it is then fetched in full, correctly, only slower).
 *
 * Best effort: the cache never holds a crawl up. A lookup that fails — the read model not set up
 * yet (a frontier started before projector-pg), a swap in progress that times out, Postgres
 * refusing — sends the batch's requests without entries, and says so once a minute.
 *
 * A re-produced request (a frontier that crashed after producing and decides the batch again) may
 * carry a newer entry than its first copy: FetchRequested is a command, not projected, and either
 * copy leads to the same page events (their ids come from the fetch).
 */
import type { CachedPage } from '@trawl/schemas';
import type { Pool } from '@trawl/store';
import { counterIn, defaultMetrics, onceEvery, type Logger } from '@trawl/streams';
import type { Registry } from 'prom-client';

export interface CacheKey {
  readonly userId: string;
  readonly url: string;
}

export const cacheKey = (userId: string, url: string): string => `${userId}\u0000${url}`;

interface CacheRow {
  user_id: string;
  url: string;
  content_hash: string;
  fetched_at: Date;
  final_url: string;
  status: number;
  content_type: string | null;
  etag: string | null;
  last_modified: string | null;
}

export class HttpCacheReader {
  private readonly lookups;
  /** A failing lookup is reported once a minute, not once a batch. */
  private readonly warn = onceEvery(60_000);

  constructor(
    private readonly db: Pick<Pool, 'query'>,
    private readonly logger: Logger,
    metrics: Registry = defaultMetrics,
  ) {
    this.lookups = counterIn(metrics, 'trawl_frontier_cache_lookups_total', 'Fetch requests looked up in their user\'s HTTP cache, by result: hit (an entry went out with the request), miss, error (the lookup failed; sent without).', ['result']);
  }

  /** Entries by cacheKey(user, url); empty when the lookup fails. */
  async lookup(keys: readonly CacheKey[]): Promise<Map<string, CachedPage>> {
    const out = new Map<string, CachedPage>();
    if (keys.length === 0) return out;
    let rows: CacheRow[];
    try {
      ({ rows } = await this.db.query<CacheRow>(
        `SELECT c.user_id, c.url, c.content_hash, c.fetched_at, c.final_url, c.status, c.content_type, c.etag, c.last_modified
           FROM http_cache c JOIN unnest($1::text[], $2::text[]) AS k(user_id, url) ON c.user_id = k.user_id AND c.url = k.url`,
        [keys.map((k) => k.userId), keys.map((k) => k.url)],
      ));
    } catch (err) {
      this.lookups.inc({ result: 'error' }, keys.length);
      if (this.warn()) {
        // 42P01: the read model does not exist yet (projector-pg has not set it up in this database).
        const missing = (err as { code?: string }).code === '42P01';
        this.logger.warn({ err: missing ? undefined : err }, missing ? 'no http_cache read model yet: fetches go out without cache entries until projector-pg creates it' : 'HTTP cache lookup failed: fetches go out without cache entries');
      }
      return out;
    }
    for (const r of rows) {
      out.set(cacheKey(r.user_id, r.url), {
        content_hash: r.content_hash,
        fetched_at: r.fetched_at,
        final_url: r.final_url,
        status: r.status,
        content_type: r.content_type,
        etag: r.etag,
        last_modified: r.last_modified,
      });
    }
    this.lookups.inc({ result: 'hit' }, out.size);
    this.lookups.inc({ result: 'miss' }, keys.length - out.size);
    return out;
  }
}
