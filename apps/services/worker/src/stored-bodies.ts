/**
 * The worker's side of the HTTP cache: the bodies a cache entry names, read from the content store
 * (CachedBodies for the crawl's PageProcessor). A body that is missing (deleted with its job's
 * content, or never written) or cannot be read now (S3 down, or the object does not match its hash)
 * is `undefined`: the page is then fetched in full, never failed for it. The read starts the page's
 * budget, as a fetch does (page-budget.ts), so a hung S3 read ends like a hung fetch.
 */
import { contentHash, ContentNotFoundError, type ContentStore } from '@trawl/content';
import type { CachedBodies } from '@trawl/crawl';
import { counterIn, defaultMetrics, onceEvery, RetriableError, type Logger } from '@trawl/streams';
import type { Registry } from 'prom-client';
import { startBudgetOf } from './page-budget.ts';

export class StoredBodies implements CachedBodies {
  private readonly reads;
  /** An unreadable store is reported once a minute, not once a page. */
  private readonly warn = onceEvery(60_000);

  constructor(
    private readonly store: Pick<ContentStore, 'get'>,
    private readonly logger: Logger,
    metrics: Registry = defaultMetrics,
    /**
     * A re-extraction's reader: a body that cannot be read now (S3 down, a mismatching object)
     * throws a RetriableError instead of being undefined — such a page has no network to fall
     * back on, so it waits for the store in the retry tiers; only a missing body is undefined.
     */
    private readonly options: { readonly strict?: boolean } = {},
  ) {
    this.reads = counterIn(metrics, 'trawl_worker_cached_body_reads_total', 'Stored bodies read for the HTTP cache, by result: found, missing (fetched in full instead), unreadable (S3 down or the object does not match its hash; fetched in full).', ['result']);
  }

  async body(hash: string, options: { signal?: AbortSignal } = {}): Promise<string | undefined> {
    if (options.signal) startBudgetOf(options.signal);
    let bytes: Buffer;
    try {
      bytes = (await this.store.get(hash, options)).body;
    } catch (err) {
      if (options.signal?.aborted) throw err;
      if (err instanceof ContentNotFoundError) {
        this.reads.inc({ result: 'missing' });
        return undefined;
      }
      this.unreadable(hash, err);
      return undefined;
    }
    if (contentHash(bytes) !== hash) {
      this.unreadable(hash, new Error(`the stored object ${hash} does not hash to its key`));
      return undefined;
    }
    this.reads.inc({ result: 'found' });
    return bytes.toString('utf8');
  }

  private unreadable(hash: string, err: unknown): void {
    this.reads.inc({ result: 'unreadable' });
    if (this.options.strict) throw new RetriableError(`the stored body ${hash.slice(0, 12)}… cannot be read now`, { cause: err });
    if (!this.warn()) return;
    this.logger.warn({ err, hash }, 'a cached body cannot be read: pages are fetched in full meanwhile');
  }
}
