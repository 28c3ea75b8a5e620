/**
 * One linked file of a page, for the job's downloads (CrawlSpec.downloads): a fetch of the job like
 * its pages — robots.txt, the host's politeness slot, the job's request options and proxy, the
 * egress rules (the HTTP fetcher's pinned connections) — over HTTP, its bytes read up to the job's
 * `max_bytes` (at most the operator's TRAWL_DOWNLOADS_MAX_BYTES). It is not kept, with the reason,
 * when robots.txt disallows it, it does not answer 2xx, its Content-Type is not one the job asked
 * for, or it is too large. The worker stores what is kept (page-downloads.ts).
 */
import { BodyTooLargeError } from '../errors.ts';
import { parseContentType } from '../fetch/content-type.ts';
import { downloadTypeMatches } from '../parse/download-links.ts';
import { hostPolicyOf } from '../politeness/host-limiter.ts';
import { openSpecCredentials } from '../request/credentials.ts';
import { requestProfileOf } from '../request/request-profile.ts';
import { specWithParams } from '../params/param-template.ts';
import type { DocumentLimits } from '../fetch/document-limits.ts';
import type { PageFetcher } from '../fetch/page-fetcher.ts';
import type { HostLimiter } from '../politeness/host-limiter.ts';
import type { RobotsCache } from '../politeness/robots.ts';
import type { ProxyChoice, ProxyPools } from '../proxy/proxy-pool.ts';
import type { CredentialOpener } from '../request/credentials.ts';
import type { FetchWithSpec } from '../spec/spec-reference.ts';

/** What a download fetches with: the page processor's own (PageProcessorDeps extends it). */
export interface DownloadDeps {
  readonly http: PageFetcher;
  readonly robots: RobotsCache;
  readonly limiter: HostLimiter;
  /** Opens the spec's sealed credentials (the worker's TRAWL_SECRETS_KEY); without it they are used as they are. */
  readonly credentials?: CredentialOpener;
  /** Jobs' proxy pools (CrawlSpec.proxies, TRAWL_PROXY_URL: proxy-pool.ts); without it every fetch goes direct. */
  readonly proxies?: Pick<ProxyPools, 'pick' | 'report'>;
  /** How PDFs are read (their text for the text and markdown formats) and the ceiling of downloads; without it, PDFs are recorded unread and downloads are not fetched. */
  readonly documents?: DocumentLimits;
}

/** A linked file of a page, fetched for the job's downloads (PageProcessor.download). */
export interface DownloadedFile {
  readonly url: string;
  readonly contentType: string | null;
  readonly data: Uint8Array;
}

export async function downloadFile(
  deps: DownloadDeps,
  request: FetchWithSpec,
  url: string,
  options: { signal?: AbortSignal } = {},
): Promise<DownloadedFile | { readonly skipped: string }> {
  const spec = specWithParams(openSpecCredentials(request.spec, deps.credentials), request.params ?? {});
  const wanted = spec.downloads;
  if (!wanted || !deps.documents) return { skipped: 'no downloads' };
  const profile = requestProfileOf(spec, deps.credentials);
  const picked: ProxyChoice | null = deps.proxies?.pick(request.job_id, spec) ?? null;
  const robots = await deps.robots.check(url, { request: profile, ...(picked ? { proxy: picked.proxy } : {}) });
  if (!robots.allowed) return { skipped: 'robots.txt disallows it' };
  const host = new URL(url).host;
  const maxBytes = Math.min(Number(wanted.max_bytes), deps.documents.downloadMaxBytes);
  const release = await deps.limiter.acquire(host, { jobId: request.job_id, policy: hostPolicyOf(spec), crawlDelayMs: robots.crawlDelayMs, signal: options.signal });
  try {
    const result = await deps.http.fetch(url, { signal: options.signal, ...(profile ? { request: profile } : {}), ...(picked ? { proxy: picked.proxy } : {}), accept: 'bytes', maxBodyBytes: maxBytes, oversize: 'refuse' });
    if (result.status < 200 || result.status >= 300) return { skipped: `status ${result.status}` };
    if (!downloadTypeMatches(wanted.types, parseContentType(result.contentType).essence)) return { skipped: `type ${result.contentType ?? 'none'}` };
    return { url, contentType: result.contentType, data: result.data ?? new Uint8Array() };
  } catch (err) {
    if (err instanceof BodyTooLargeError) return { skipped: `over ${maxBytes} bytes` };
    throw err;
  } finally {
    release();
  }
}
