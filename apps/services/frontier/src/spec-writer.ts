/**
 * Puts jobs' specs where workers find them by hash (crawl_specs), before the frontier produces a
 * FetchRequested that names one: written in its own statement, committed before the produce, never
 * in the batch's transaction (which commits after). Hashes known written are remembered (bounded),
 * so a job's spec costs one insert per frontier process, not one per batch.
 */
import type { CrawlSpec } from '@trawl/schemas';
import { specHash } from '@trawl/crawl';
import { saveCrawlSpecs, type Pool } from '@trawl/store';

export class SpecWriter {
  private readonly written = new Set<string>();

  constructor(
    private readonly pool: Pick<Pool, 'query'>,
    private readonly maxRemembered = 10_000,
  ) {}

  /** Stores the specs not known to be stored yet; resolves once they are committed. */
  async ensure(specs: Iterable<CrawlSpec>): Promise<void> {
    const missing = new Map<string, CrawlSpec>();
    for (const spec of specs) {
      const hash = specHash(spec);
      if (!this.written.has(hash)) missing.set(hash, spec);
    }
    if (missing.size === 0) return;
    await saveCrawlSpecs(this.pool, missing);
    for (const hash of missing.keys()) {
      if (this.written.size >= this.maxRemembered) this.written.delete(this.written.values().next().value!);
      this.written.add(hash);
    }
  }
}
