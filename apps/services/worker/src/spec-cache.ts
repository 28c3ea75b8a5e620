/**
 * Jobs' specs by hash, for FetchRequested events that carry `spec_hash` instead of the spec: loaded
 * from Postgres (crawl_specs, written by the frontier before it produced the request) on first use,
 * then kept, the most recently used `max` of them (TRAWL_WORKER_SPEC_CACHE). A hash's spec never
 * changes, so a cached one is never stale; concurrent misses on one hash share one query.
 */
import type { CrawlSpec } from '@trawl/schemas';
import { specHash } from '@trawl/crawl';
import { NonRetriableError, RetriableError } from '@trawl/streams';
import { loadCrawlSpec, type Pool } from '@trawl/store';

export class SpecCache {
  private readonly specs = new Map<string, CrawlSpec>();
  private readonly loading = new Map<string, Promise<CrawlSpec>>();

  constructor(
    private readonly pool: Pick<Pool, 'query'>,
    private readonly max = 256,
  ) {}

  /** The spec stored under `hash`. A missing one is retriable (another database, a frontier not yet committed); a corrupt one is not. */
  get(hash: string): Promise<CrawlSpec> {
    const hit = this.specs.get(hash);
    if (hit) {
      this.specs.delete(hash);
      this.specs.set(hash, hit);
      return Promise.resolve(hit);
    }
    let pending = this.loading.get(hash);
    if (!pending) {
      pending = this.load(hash).finally(() => this.loading.delete(hash));
      this.loading.set(hash, pending);
    }
    return pending;
  }

  get size(): number {
    return this.specs.size;
  }

  private async load(hash: string): Promise<CrawlSpec> {
    const spec = await loadCrawlSpec(this.pool, hash);
    if (!spec) throw new RetriableError(`no crawl spec stored under ${hash} (crawl_specs)`);
    if (specHash(spec) !== hash) throw new NonRetriableError(`the crawl spec stored under ${hash} hashes to ${specHash(spec)}`);
    this.specs.set(hash, spec);
    if (this.specs.size > this.max) this.specs.delete(this.specs.keys().next().value!);
    return spec;
  }
}
