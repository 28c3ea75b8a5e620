/**
 * The worker's side of the content store: what it keeps of each page, before the page's events.
 *
 * - A job that asks for formats: the body and each format, required — a store that does not answer
 *   fails the delivery as retriable, since the PageFetched must name what the job asked for.
 * - Any other HTML page fetched over HTTP with a 2xx, whole (not truncated), of a job that keeps
 *   bodies for the HTTP cache (CrawlSpec.store_in_cache: a recurring schedule's runs by default) or
 *   already in the user's cache (the request carries its entry, which is kept up to date): the
 *   body alone, so that a later crawl by the same user can revalidate it (a 304 reuses this body)
 *   or reuse it within max_age. A crawl that runs once stores nothing by default: an object write
 *   per page is most of what such a crawl would spend on the cache. Written without a HEAD first
 *   (ContentStore.write): such bodies are mostly new. Best effort: a store that does not answer
 *   leaves the page without a content hash (it is not cached, a later crawl fetches it in full),
 *   and the store is not asked again for COOL_DOWN_MS, so an S3 outage slows no crawl.
 *   TRAWL_HTTP_CACHE=off turns the HTTP cache off whatever the jobs ask.
 * - A PDF page read for its text (the job keeps text or markdown): its bytes are the body, its text
 *   and Markdown the parse step's (ProcessedPage.derived); it has no `html`.
 * - A linked file of the job's downloads (storeDownload): stored by its hash, once (`put` asks
 *   `HEAD` first), within the user's storage quota like a page's content; never for the HTTP cache.
 * - A page served from the cache (ProcessedPage.cache): its body is stored already under its hash;
 *   only the formats asked are derived and stored (HEAD-only when another job stored them).
 * - Before anything is written, the job's user must be within their storage quota
 *   (storage-quota.ts). Past it nothing is written, formats or cache body: the page goes on without
 *   content (a reused page keeps naming the cached body it was parsed from) and its PageFetched says
 *   why (`content_refused: STORAGE_QUOTA_EXCEEDED`); the crawl goes on.
 *
 * The bucket is checked at start in the background and again on first use, so a worker with
 * TRAWL_HTTP_CACHE=off whose jobs never ask for formats runs without S3.
 */
import { ContentStore, FORMAT_MEDIA_TYPES, isContentFormat, storePageContent, type ContentFormat } from '@trawl/content';
import { isPdfType, type DownloadedFile, type FetchWithSpec, type ProcessedPage, type StoredContent } from '@trawl/crawl';
import type { StoredDownload } from '@trawl/schemas';
import { counterIn, defaultMetrics, type Logger } from '@trawl/streams';
import { hasRequestOptions } from '@trawl/schemas';
import type { Registry } from 'prom-client';
import { STORAGE_QUOTA_EXCEEDED, type StorageQuota } from './storage-quota.ts';

/** How long the best-effort store of cacheable bodies is skipped after a failure. */
const COOL_DOWN_MS = 30_000;

export interface PageContentStoreOptions {
  /** Store the bodies of cacheable pages for the HTTP cache when their job asks (TRAWL_HTTP_CACHE, default on). */
  readonly httpCache?: boolean;
  /** Whether a job's user may store more; absent: always. */
  readonly quota?: Pick<StorageQuota, 'mayStore'>;
  readonly metrics?: Registry;
  readonly now?: () => number;
}

const encoder = new TextEncoder();

export class PageContentStore {
  private ready: Promise<void> | undefined;
  private readonly httpCache: boolean;
  private readonly now: () => number;
  private coolUntil = 0;
  private readonly quota: Pick<StorageQuota, 'mayStore'> | undefined;
  private readonly refusals;

  constructor(
    private readonly contentStore: ContentStore,
    private readonly logger: Logger,
    options: PageContentStoreOptions = {},
  ) {
    this.httpCache = options.httpCache ?? true;
    this.now = options.now ?? Date.now;
    this.quota = options.quota;
    this.refusals = counterIn(options.metrics ?? defaultMetrics, 'trawl_worker_content_refused_total', 'Pages whose body and formats were not stored, by reason (STORAGE_QUOTA_EXCEEDED: the user is past their storage quota); the pages themselves succeed.', ['reason']);
  }

  /** Creates the bucket if missing; a failure is logged here and retried on first use. */
  prepare(): void {
    this.ensureBucket().catch((err: unknown) => this.logger.warn({ err }, 'content store not ready; it is checked again when a page is stored'));
  }

  async store(request: FetchWithSpec, page: Pick<ProcessedPage, 'result' | 'cache' | 'metadata' | 'derived'>): Promise<StoredContent | undefined> {
    const { result } = page;
    const formats = request.spec.formats.filter(isContentFormat) as ContentFormat[];
    const mediaType = result.contentType?.split(';')[0]?.trim().toLowerCase() ?? null;
    if (formats.length > 0 && !result.isHtml && result.data && isPdfType(mediaType)) {
      if (!(await this.mayStore(request))) return this.refused(page);
      await this.ensureBucket();
      return storePageContent(this.contentStore, { html: '', document: { bytes: result.data, mediaType: mediaType! }, finalUrl: result.finalUrl, derived: page.derived ?? null }, formats);
    }
    if (!result.isHtml || result.body === null) return undefined;
    if (page.cache && formats.length === 0) return { contentHash: page.cache.contentHash, formats: [] };
    if (formats.length > 0) {
      if (!(await this.mayStore(request))) return this.refused(page);
      await this.ensureBucket();
      // A render's screenshot and PDF (result.captures) go with the body when the job asked for them.
      // The page's structured data (the parse step's, when `metadata` is asked) is stored as JSON beside them.
      return storePageContent(this.contentStore, { html: result.body, finalUrl: result.finalUrl, ...(result.captures ? { captures: result.captures } : {}), ...(page.metadata ? { metadata: page.metadata } : {}), ...(page.derived ? { derived: page.derived } : {}), mainContent: request.spec.only_main_content ?? false }, formats);
    }
    if (!this.httpCache || !isCacheable(result) || this.now() < this.coolUntil) return undefined;
    if (!request.spec.store_in_cache && !request.cached) return undefined;
    // What a crawl with request options got is not what another crawl of the page would (page-processor.ts).
    if (hasRequestOptions(request.spec)) return undefined;
    if (!(await this.mayStore(request))) return this.refused(page);
    try {
      await this.ensureBucket();
      const put = await this.contentStore.write(encoder.encode(result.body), FORMAT_MEDIA_TYPES.html);
      return { contentHash: put.hash, formats: [] };
    } catch (err) {
      this.coolUntil = this.now() + COOL_DOWN_MS;
      this.logger.warn({ err, url: request.url, coolDownMs: COOL_DOWN_MS }, 'a page body could not be stored for the HTTP cache: pages are not cached meanwhile');
      return undefined;
    }
  }

  /** A linked file of the job's downloads, stored under its hash (once); null when the user's storage quota is used up. */
  async storeDownload(request: FetchWithSpec, file: DownloadedFile): Promise<StoredDownload | null> {
    if (!(await this.mayStore(request))) {
      this.refusals.inc({ reason: STORAGE_QUOTA_EXCEEDED });
      return null;
    }
    await this.ensureBucket();
    const put = await this.contentStore.put(file.data, file.contentType?.split(';')[0]?.trim() || 'application/octet-stream');
    return { url: file.url, sha256: put.hash, content_type: file.contentType, bytes: put.bytes };
  }

  close(): void {
    this.contentStore.close();
  }

  private async mayStore(request: FetchWithSpec): Promise<boolean> {
    return this.quota ? this.quota.mayStore(request.job_id) : true;
  }

  private refused(page: Pick<ProcessedPage, 'cache'>): StoredContent {
    this.refusals.inc({ reason: STORAGE_QUOTA_EXCEEDED });
    return { contentHash: page.cache?.contentHash ?? null, formats: [], refused: STORAGE_QUOTA_EXCEEDED };
  }

  private ensureBucket(): Promise<void> {
    this.ready ??= this.contentStore.ensureBucket().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }
}

/** What the HTTP cache keeps: whole HTML pages fetched over HTTP with a success (never a browser render: cache-plan.ts). */
export function isCacheable(result: ProcessedPage['result']): boolean {
  return result.renderMode === 'http' && result.status >= 200 && result.status < 300 && !result.truncated && result.isHtml && result.body !== null;
}
