/**
 * `POST /scrape` and `POST /map`: a crawl of depth 0 through the same pipeline as any crawl
 * (CrawlService: checks, quotas, CrawlRequested + JobDispatched on `trawl.jobs`, a job at
 * `/jobs/:id`), answered as soon as the page's outcome is known.
 *
 * How the outcome is learnt fast: a waiter on the API's own live subscription of `trawl.pages`
 * (page-waiters.ts), registered under a job id chosen here *before* the job is submitted, so the
 * worker's PageFetched cannot pass unseen. The answer's content is read from the content store by
 * the hashes the event names. Should the subscription miss it (not connected yet, a rebalance), a
 * slow poll of the read model (`job_pages`, `jobs`) answers instead — without `links`, which the
 * read model does not keep.
 *
 * Dedupe: a scrape is never answered from an earlier job (CrawlService.submitFresh); `max_age`
 * lets it reuse a page from the HTTP cache, page by page, as a crawl does.
 *
 * The API fetches nothing itself: it only resolves the URL's host against the egress rules
 * (url-check.ts), to refuse a private or stack address with a 400 before any job exists.
 */
import { randomUUID } from 'node:crypto';
import { ContentNotFoundError, type ContentStore } from '@trawl/content';
import type { PageFetched } from '@trawl/schemas';
import type { Pool } from '@trawl/store';
import { ApiError } from '../errors.ts';
import type { CrawlBody, CrawlService } from '../crawl/submit-crawl.ts';
import { findJob, isTerminal } from '../data/jobs.ts';
import { listPages, type PageRow } from '../data/job-pages.ts';
import { pageMetadata, type PageMetadata } from './page-metadata.ts';
import type { PageOutcome, PageWaiters } from './page-waiters.ts';
import type { EgressUrlCheck } from '../http/egress-url.ts';

/** What a scrape may ask for; `metadata` comes with every answer. */
export const SCRAPE_FORMATS = ['markdown', 'html', 'text', 'links', 'screenshot', 'pdf', 'metadata'] as const;
export type ScrapeFormat = (typeof SCRAPE_FORMATS)[number];
const TEXT = new Set(['markdown', 'html', 'text']);
const BINARY = new Set(['screenshot', 'pdf']);

export interface ScrapeConfig {
  /** `timeout_ms` when the request gives none (`TRAWL_SCRAPE_TIMEOUT_MS`). */
  readonly defaultTimeoutMs: number;
  /** The longest `timeout_ms` accepted (`TRAWL_SCRAPE_MAX_TIMEOUT_MS`); more is TIMEOUT_TOO_LONG. */
  readonly maxTimeoutMs: number;
  /** `POST /map`'s `timeout_ms` when none is given. */
  readonly mapTimeoutMs: number;
  /** How often the read model is asked, in case the live subscription misses the outcome. */
  readonly fallbackPollMs: number;
}

export const DEFAULT_SCRAPE_CONFIG: ScrapeConfig = { defaultTimeoutMs: 30_000, maxTimeoutMs: 120_000, mapTimeoutMs: 15_000, fallbackPollMs: 1_000 };

type RequestOptions = Omit<CrawlBody, 'start_urls' | 'depth' | 'max_pages' | 'schedule_at' | 'interval' | 'time_zone' | 'overlap' | 'dedupe' | 'formats' | 'sitemap' | 'spider'>;

export interface ScrapeBody extends RequestOptions {
  readonly url: string;
  readonly formats?: readonly string[];
  readonly timeout_ms?: number;
  readonly spider?: string;
}

export interface MapBody extends Pick<RequestOptions, 'headers' | 'user_agent' | 'locale' | 'cookies' | 'proxy' | 'proxies'> {
  readonly url: string;
  readonly search?: string;
  readonly limit?: number;
  readonly include_subdomains?: boolean;
  readonly sitemap?: 'include' | 'only' | 'skip';
  readonly timeout_ms?: number;
}

export type Answer = { readonly code: 200 | 202; readonly body: Record<string, unknown> };

interface Log {
  info(fields: object, message: string): void;
}

export interface ScrapeServiceOptions {
  readonly crawls: Pick<CrawlService, 'submitFresh'>;
  readonly waiters: PageWaiters;
  readonly pool: Pool;
  readonly content: Pick<ContentStore, 'get'>;
  readonly urls: Pick<EgressUrlCheck, 'check'>;
  readonly config: ScrapeConfig;
}

/** A first page outcome as the read model has it (the subscription missed the event). */
type Landed = { readonly kind: 'row'; readonly row: PageRow } | { readonly kind: 'ended'; readonly reason: string | null };

export class ScrapeService {
  constructor(private readonly o: ScrapeServiceOptions) {}

  checkTimeout(timeoutMs: number | undefined, fallback: number): number {
    const t = timeoutMs ?? fallback;
    if (t > this.o.config.maxTimeoutMs) throw new ApiError('TIMEOUT_TOO_LONG', `timeout_ms is over this server's maximum of ${this.o.config.maxTimeoutMs} ms`, { field: 'timeout_ms' });
    return t;
  }

  async scrape(userId: string, body: ScrapeBody, log?: Log): Promise<Answer> {
    const formats = checkFormats(body.formats ?? ['markdown']);
    const timeoutMs = this.checkTimeout(body.timeout_ms, this.o.config.defaultTimeoutMs);
    await this.o.urls.check(body.url, log);
    const { url, formats: _f, timeout_ms: _t, ...options } = body;
    // The HTML and the page's structured data (the worker's parse step) are kept whatever is asked: `metadata` comes with every answer.
    const stored = ['html', 'metadata', ...formats.filter((f) => f !== 'html' && (TEXT.has(f) || BINARY.has(f)))];
    const crawl: CrawlBody = { ...options, start_urls: [url], depth: 0, max_pages: 1, sitemap: 'skip', formats: stored };
    const { jobId, outcome } = await this.run(userId, crawl, timeoutMs);
    if (!outcome) return accepted(jobId);
    return { code: 200, body: await this.answer(userId, jobId, url, formats, outcome) };
  }

  /** The answer of a scrape job from the read model (`GET /scrape/:id`): every stored format, no links. */
  async result(userId: string, jobId: string): Promise<Answer> {
    const job = await findJob(this.o.pool, jobId, userId);
    if (!job) throw new ApiError('JOB_NOT_FOUND', `no job ${jobId}`);
    const landed = await this.landed(userId, jobId);
    if (!landed) return accepted(jobId);
    const formats = landed.kind === 'row' ? (checkFormats(landed.row.formats.map((f) => f.format))) : [];
    return { code: 200, body: await this.answer(userId, jobId, job.start_urls?.[0] ?? '', formats, landed) };
  }

  async map(userId: string, body: MapBody, log?: Log): Promise<Answer> {
    const timeoutMs = this.checkTimeout(body.timeout_ms, this.o.config.mapTimeoutMs);
    await this.o.urls.check(body.url, log);
    const { url, search, limit = 100, include_subdomains: subdomains = false, sitemap = 'include', timeout_ms: _t, ...options } = body;
    // The start page's links and the site's sitemaps ride on the root's PageFetched: depth 0 and
    // one page bound the crawl, whatever the site holds.
    const crawl: CrawlBody = { ...options, start_urls: [url], depth: 0, max_pages: 1, sitemap, ...(subdomains ? { scope: 'same_domain' as const } : {}) };
    const { jobId, outcome } = await this.run(userId, crawl, timeoutMs);
    if (!outcome) return accepted(jobId);
    const base = { job_id: jobId, url };
    if (outcome.kind === 'fetched') {
      const page = outcome.page;
      const found = [page.final_url, ...(sitemap === 'only' ? [] : page.links), ...page.sitemap_urls];
      return { code: 200, body: { ...base, ok: true, links: mapLinks(found, { root: page.final_url || url, search, limit, subdomains }) } };
    }
    if (outcome.kind === 'row' && outcome.row.ok) {
      return { code: 200, body: { ...base, ok: true, links: mapLinks([outcome.row.final_url ?? url], { root: url, search, limit, subdomains }) } };
    }
    return { code: 200, body: { ...base, ok: false, links: [], error: failure(outcome) } };
  }

  /** Submits the crawl with a waiter already in place; the outcome, or null when `timeoutMs` passed first. */
  private async run(userId: string, crawl: CrawlBody, timeoutMs: number): Promise<{ jobId: string; outcome: PageOutcome | Landed | null }> {
    const jobId = randomUUID();
    const waiter = this.o.waiters.wait(jobId);
    let timer: NodeJS.Timeout | undefined;
    let poller: NodeJS.Timeout | undefined;
    try {
      await this.o.crawls.submitFresh(userId, crawl, jobId);
      const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
      const fallback = new Promise<Landed>((resolve) => {
        const poll = () => {
          poller = setTimeout(() => {
            this.landed(userId, jobId).then((landed) => (landed ? resolve(landed) : poll()), poll);
          }, this.o.config.fallbackPollMs);
        };
        poll();
      });
      return { jobId, outcome: await Promise.race([waiter.outcome, fallback, timeout]) };
    } finally {
      clearTimeout(timer);
      clearTimeout(poller);
      waiter.cancel();
    }
  }

  /** The job's first page in the read model, or its end without one; null while neither is there. */
  private async landed(userId: string, jobId: string): Promise<Landed | null> {
    const [row] = await listPages(this.o.pool, { jobId, limit: 1 });
    if (row) return { kind: 'row', row };
    const job = await findJob(this.o.pool, jobId, userId);
    // A job that counted a page whose row is not projected yet has not landed: the row is coming.
    if (!job || !isTerminal(job.status) || job.pages_fetched + job.pages_failed > 0) return null;
    return { kind: 'ended', reason: job.status };
  }

  private async answer(_userId: string, jobId: string, url: string, formats: readonly ScrapeFormat[], outcome: PageOutcome | Landed): Promise<Record<string, unknown>> {
    const base = { job_id: jobId, url };
    if (outcome.kind === 'failed') return { ...base, ok: false, status: outcome.page.status, error: { code: outcome.page.error_code, message: outcome.page.error_message } };
    if (outcome.kind === 'ended') return { ...base, ok: false, status: null, error: failure(outcome) };
    if (outcome.kind === 'row' && !outcome.row.ok) return { ...base, ok: false, status: outcome.row.status, error: { code: outcome.row.error_code, message: outcome.row.error_message } };
    const page = outcome.kind === 'fetched' ? fromEvent(outcome.page) : fromRow(outcome.row);
    const hashes = new Map(page.formats.map((f) => [f.format, f.hash]));
    const text = async (format: string): Promise<string | null> => {
      const hash = hashes.get(format);
      if (!hash) return null;
      try {
        return (await this.o.content.get(hash)).body.toString('utf8');
      } catch (err) {
        if (err instanceof ContentNotFoundError) return null;
        throw new ApiError('DEPENDENCY_UNAVAILABLE', 'the content store does not answer; retry later', { cause: err });
      }
    };
    const wanted = formats.filter((f) => TEXT.has(f));
    // The HTML is read when asked for, or for the metadata of a page stored without its structured
    // data (answerMetadata): not for every answer, since it is the largest object and a read of it
    // costs the API and the store as much as the format asked for.
    const [asked, structured, ...texts] = await Promise.all([wanted.includes('html') ? text('html') : null, text('metadata'), ...wanted.filter((f) => f !== 'html').map((f) => text(f))]);
    const html = asked ?? (structured === null && !wanted.includes('html') ? await text('html') : null);
    const out: Record<string, unknown> = {};
    let i = 0;
    for (const f of wanted) out[f] = f === 'html' ? html : texts[i++];
    if (formats.includes('links')) out.links = page.links;
    for (const f of formats) if (BINARY.has(f)) out[f] = hashes.has(f) ? `/jobs/${jobId}/pages/${page.fetch_id}/content?format=${f}` : null;
    const metadata: PageMetadata & Record<string, unknown> = {
      ...answerMetadata(structured, html),
      status_code: page.status,
      content_type: page.content_type,
      fetch_ms: page.fetch_ms,
      render_mode: page.render_mode,
      from_cache: page.from_cache,
    };
    return { ...base, ok: true, status: page.status, final_url: page.final_url, fetch_id: page.fetch_id, metadata, formats: out, item_count: page.item_count };
  }
}

/**
 * The answer's `metadata`: the page's structured data as the worker stored it (`metadata` format:
 * OpenGraph, Twitter, JSON-LD, microdata), with `social` (the OpenGraph and Twitter properties'
 * first values) as before; a page stored without it (a job from before, or one the read model
 * answers for) falls back to a bounded scan of the stored HTML's head.
 */
export function answerMetadata(structured: string | null, html: string | null): PageMetadata & Record<string, unknown> {
  if (structured !== null) {
    try {
      const m = JSON.parse(structured) as Record<string, unknown>;
      const social: Record<string, string> = {};
      for (const group of [m.open_graph, m.twitter]) {
        for (const [k, v] of Object.entries((group ?? {}) as Record<string, string | string[]>)) social[k] = Array.isArray(v) ? v[0]! : v;
      }
      return { ...m, title: (m.title as string | null) ?? null, description: (m.description as string | null) ?? null, language: (m.language as string | null) ?? null, canonical: (m.canonical as string | null) ?? null, social };
    } catch {
      // A stored object that is not JSON is no metadata: the head is read instead.
    }
  }
  return html === null ? { title: null, description: null, language: null, canonical: null, social: {} } : { ...pageMetadata(html) };
}

interface PageView {
  readonly fetch_id: string;
  readonly status: number | null;
  readonly final_url: string | null;
  readonly content_type: string | null;
  readonly fetch_ms: number | null;
  readonly render_mode: string | null;
  readonly from_cache: string | null;
  readonly item_count: number | null;
  readonly links: readonly string[] | null;
  readonly formats: readonly { readonly format: string; readonly hash: string }[];
}

function fromEvent(p: PageFetched): PageView {
  return { fetch_id: p.fetch_id, status: p.status, final_url: p.final_url, content_type: p.content_type, fetch_ms: p.fetch_ms, render_mode: p.render_mode, from_cache: p.from_cache, item_count: p.item_count, links: p.links, formats: p.formats };
}

/** The read model keeps no links: `links` is null when the answer comes from it. */
function fromRow(r: PageRow): PageView {
  return { fetch_id: r.fetch_id, status: r.status, final_url: r.final_url, content_type: r.content_type, fetch_ms: r.fetch_ms, render_mode: r.render_mode, from_cache: r.from_cache, item_count: r.item_count, links: null, formats: r.formats };
}

function failure(outcome: PageOutcome | Landed): { code: string; message: string } {
  if (outcome.kind === 'failed') return { code: outcome.page.error_code, message: outcome.page.error_message };
  if (outcome.kind === 'row') return { code: outcome.row.error_code ?? 'FETCH_FAILED', message: outcome.row.error_message ?? 'the page failed' };
  if (outcome.kind === 'fetched') return { code: 'UNEXPECTED', message: 'the page was fetched' };
  return { code: 'NO_PAGE', message: `the job ended (${outcome.reason ?? 'no reason given'}) without fetching the page: refused by robots.txt, the egress rules or the crawl's rules` };
}

function accepted(jobId: string): Answer {
  return { code: 202, body: { job_id: jobId, status: 'pending', status_url: `/jobs/${jobId}/status`, result_url: `/scrape/${jobId}` } };
}

/** The formats asked for, checked: UNSUPPORTED_FORMAT names the first unknown one. */
export function checkFormats(formats: readonly string[]): ScrapeFormat[] {
  for (const [i, f] of formats.entries()) {
    if (!(SCRAPE_FORMATS as readonly string[]).includes(f)) throw new ApiError('UNSUPPORTED_FORMAT', `format "${f.slice(0, 40)}" is not one of ${SCRAPE_FORMATS.join(', ')}`, { field: `formats.${i}` });
  }
  return [...new Set(formats)] as ScrapeFormat[];
}

/**
 * A map's links: absolute http(s) URLs of the site (its host and `www.`, or any subdomain with
 * `include_subdomains`), those containing `search` (case-insensitive) alone when given, without
 * fragments, each once, at most `limit`, in the order found (the page first, then its links, then
 * the sitemaps').
 */
export function mapLinks(urls: readonly string[], o: { root: string; search?: string | undefined; limit: number; subdomains: boolean }): string[] {
  const site = new URL(o.root).hostname.toLowerCase().replace(/^www\./, '');
  const needle = o.search?.toLowerCase();
  const out = new Set<string>();
  for (const raw of urls) {
    if (out.size >= o.limit) break;
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      continue;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
    const host = u.hostname.toLowerCase();
    const ofSite = host === site || host === `www.${site}` || (o.subdomains && host.endsWith(`.${site}`));
    if (!ofSite) continue;
    u.hash = '';
    const href = u.href;
    if (needle && !href.toLowerCase().includes(needle)) continue;
    out.add(href);
  }
  return [...out];
}
