/**
 * A page's downloads (CrawlSpec.downloads): the linked files its parse found (download-links.ts in
 * @trawl/crawl), fetched one after another by the PageProcessor as fetches of the job — robots.txt,
 * the host's politeness slot, the job's request options and proxy, the egress rules — within the
 * page's fetch slot and budget, then stored in the content store by their hash (once per hash:
 * `put` asks `HEAD` first) and listed on the page's PageFetched.
 *
 * Why a sub-fetch of the page and not a FetchRequested of its own: a file is no page of the job
 * (no links, no items, no depth, not counted in max_pages or the pages-a-day quota), and the
 * page's event can then list what it linked without a join. What it costs: a file linked from
 * many pages would be fetched for each; a worker remembers the files of each job it fetched
 * (MEMORY entries, least recently used out), and requests keyed by host send a host's pages to
 * one worker, so a site's logo is fetched about once per job. One file is held in memory at a
 * time (at most the job's max_bytes, itself at most TRAWL_DOWNLOADS_MAX_BYTES). A file that fails
 * (network, robots.txt, status, type, size) is logged and left out; the page goes on.
 */
import type { FetchWithSpec, PageProcessor } from '@trawl/crawl';
import type { StoredDownload } from '@trawl/schemas';
import type { Logger } from '@trawl/streams';
import type { PageContentStore } from './page-content-store.ts';

/** Files remembered per worker, across jobs (a few hundred bytes each). */
const MEMORY = 10_000;

const FAILED = Symbol('failed');

export class PageDownloads {
  /** `job \0 url` → what was stored, or null for a file not kept. */
  private readonly seen = new Map<string, StoredDownload | null>();

  constructor(
    private readonly processor: Pick<PageProcessor, 'download'>,
    private readonly content: Pick<PageContentStore, 'storeDownload'>,
    private readonly logger: Logger,
  ) {}

  async run(request: FetchWithSpec, urls: readonly string[], signal?: AbortSignal): Promise<StoredDownload[]> {
    const out: StoredDownload[] = [];
    for (const url of urls) {
      signal?.throwIfAborted();
      const key = `${request.job_id}\0${url}`;
      const known = this.seen.get(key);
      const stored = known === undefined ? await this.fetchAndStore(request, url, signal) : known;
      if (stored === FAILED) continue;
      // Least recently used out: a file seen again moves to the end.
      this.seen.delete(key);
      if (this.seen.size >= MEMORY) this.seen.delete(this.seen.keys().next().value!);
      this.seen.set(key, stored);
      if (stored) out.push(stored);
    }
    return out;
  }

  /** What was stored, null for a file not kept, FAILED for one that may work on another page (not remembered). */
  private async fetchAndStore(request: FetchWithSpec, url: string, signal?: AbortSignal): Promise<StoredDownload | null | typeof FAILED> {
    try {
      const file = await this.processor.download(request, url, signal ? { signal } : {});
      if ('skipped' in file) {
        this.logger.info({ job_id: request.job_id, url: request.url, file: url, reason: file.skipped }, 'download not kept');
        return null;
      }
      const stored = await this.content.storeDownload(request, file);
      if (!stored) this.logger.info({ job_id: request.job_id, url: request.url, file: url, reason: 'STORAGE_QUOTA_EXCEEDED' }, 'download not kept');
      return stored;
    } catch (err) {
      // The page's own budget or the worker's stop ends the page, not just this file.
      if (signal?.aborted) throw err;
      this.logger.warn({ err, job_id: request.job_id, url: request.url, file: url }, 'download failed');
      return FAILED;
    }
  }
}
