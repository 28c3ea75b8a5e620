/**
 * Firecrawl-shaped answers: `POST /v1/scrape`, `/v2/scrape`, `/v1/map`,
 * `/v2/map` speak the request and answer shapes of Firecrawl's public API and of its JavaScript SDK
 * (`@mendable/firecrawl-js`), so that the SDK and tools built on it work with their base URL set to
 * Trawl. Each is a thin translation over the same ScrapeService as `POST /scrape` and `POST /map`
 * (the same pipeline, quotas, egress rules); the API key is the same Bearer key.
 *
 * Translation, and what does not translate: formats `markdown`, `html`, `rawHtml` (Trawl's `html`,
 * the body as fetched), `links`, `screenshot` (an absolute URL of the stored PNG, which needs the
 * key to read) are served; others are ignored. `onlyMainContent` (Trawl's `only_main_content`,
 * Readability) is true unless the request says false, as in Firecrawl, on scrapes and on a crawl's
 * `scrapeOptions`. A timeout answers 408 as Firecrawl does; errors are
 * `{success: false, error, code}` with Trawl's code and status.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ContentNotFoundError } from '@trawl/content';
import { ApiError } from '../errors.ts';
import { findJob } from '../data/jobs.ts';
import { listPages } from '../data/job-pages.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { jobIdParams } from '../schemas/common.ts';
import { answerMetadata, ScrapeService, type ScrapeFormat } from '../scrape/scrape-service.ts';
import { firecrawlMetadata } from '../scrape/firecrawl-metadata.ts';
import { ScrapeUrlCheck } from '../scrape/url-check.ts';

interface FirecrawlScrapeBody {
  readonly url: string;
  readonly formats?: readonly (string | { readonly type: string })[];
  readonly timeout?: number;
  readonly headers?: Record<string, string>;
  readonly maxAge?: number;
  readonly onlyMainContent?: boolean;
}

interface FirecrawlMapBody {
  readonly url: string;
  readonly search?: string;
  readonly limit?: number;
  readonly includeSubdomains?: boolean;
  readonly sitemap?: 'include' | 'only' | 'skip';
  readonly ignoreSitemap?: boolean;
  readonly sitemapOnly?: boolean;
  readonly timeout?: number;
}

interface FirecrawlCrawlBody {
  readonly url: string;
  readonly limit?: number;
  readonly maxDiscoveryDepth?: number;
  readonly maxDepth?: number;
  readonly includePaths?: readonly string[];
  readonly excludePaths?: readonly string[];
  readonly sitemap?: 'include' | 'only' | 'skip';
  readonly ignoreSitemap?: boolean;
  readonly allowSubdomains?: boolean;
  readonly scrapeOptions?: { readonly headers?: Record<string, string>; readonly onlyMainContent?: boolean };
}

/** Documents a crawl status answers at a time; `next` gives the rest. */
const CRAWL_PAGE = 50;

const FORMAT_OF: Readonly<Record<string, ScrapeFormat>> = { markdown: 'markdown', html: 'html', rawHtml: 'html', links: 'links', screenshot: 'screenshot', 'screenshot@fullPage': 'screenshot' };

/** Firecrawl accepts any body fields it knows; unknown ones are ignored here too. */
const looseBody = (extra: Record<string, object>) => ({ type: 'object', required: ['url'], properties: { url: { type: 'string', format: 'http-url', maxLength: 2048 }, ...extra } }) as const;

const firecrawlRoutes: FastifyPluginAsync = async (fastify) => {
  const scrapes = new ScrapeService({ crawls: fastify.crawls, waiters: fastify.liveFeed.waiters, pool: fastify.db, content: fastify.content, urls: new ScrapeUrlCheck(), config: fastify.config.scrape });
  const origin = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

  /**
   * Every refusal in Firecrawl's shape, `{success: false, error, code}`: the error handler's answer
   * (Trawl's code, status and message, validation failures included) reshaped on its way out.
   */
  fastify.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode < 400 || typeof payload !== 'string') return payload;
    try {
      const body = JSON.parse(payload) as { error?: { code?: string; message?: string; field?: string } | string };
      if (!body.error || typeof body.error !== 'object') return payload;
      return JSON.stringify({ success: false, error: body.error.message, code: body.error.code, ...(body.error.field ? { field: body.error.field } : {}) });
    } catch {
      return payload;
    }
  });
  const scrape = async (request: FastifyRequest<{ Body: FirecrawlScrapeBody }>, reply: FastifyReply) =>
    (async () => {
      const asked = (request.body.formats ?? ['markdown']).map((f) => (typeof f === 'string' ? f : f?.type)).filter((f): f is string => typeof f === 'string');
      const formats = [...new Set(asked.map((f) => FORMAT_OF[f]).filter((f): f is ScrapeFormat => f !== undefined))];
      const answer = await scrapes.scrape(
        request.userId,
        {
          url: request.body.url,
          formats: formats.length > 0 ? formats : ['markdown'],
          ...(typeof request.body.timeout === 'number' ? { timeout_ms: Math.min(request.body.timeout, fastify.config.scrape.maxTimeoutMs) } : {}),
          ...(request.body.headers && typeof request.body.headers === 'object' ? { headers: request.body.headers } : {}),
          ...(typeof request.body.maxAge === 'number' && request.body.maxAge > 0 ? { max_age: Math.floor(request.body.maxAge / 1000) } : {}),
          // Firecrawl's default is the main content; Trawl's own is the whole body.
          only_main_content: request.body.onlyMainContent !== false,
        },
        request.log,
      );
      if (answer.code === 202) return reply.code(408).send({ success: false, error: `the page had no outcome within the timeout; Trawl job ${String(answer.body.job_id)} goes on (GET /scrape/${String(answer.body.job_id)})`, code: 'SCRAPE_TIMEOUT' });
      const b = answer.body as { job_id: string; url: string; ok: boolean; status: number | null; final_url?: string; metadata?: Record<string, unknown>; formats?: Record<string, unknown>; error?: { code: string; message: string } };
      const f = b.formats ?? {};
      const m = b.metadata ?? {};
      const data: Record<string, unknown> = {
        ...(asked.includes('markdown') || formats.length === 0 ? { markdown: f.markdown ?? '' } : {}),
        ...(asked.includes('html') ? { html: f.html ?? null } : {}),
        ...(asked.includes('rawHtml') ? { rawHtml: f.html ?? null } : {}),
        ...(asked.includes('links') ? { links: f.links ?? [] } : {}),
        ...(typeof f.screenshot === 'string' ? { screenshot: `${origin(request)}${f.screenshot}` } : {}),
        metadata: firecrawlMetadata({
          metadata: m,
          sourceURL: b.url,
          url: b.final_url ?? b.url,
          statusCode: b.status ?? 0,
          contentType: typeof m.content_type === 'string' ? m.content_type : null,
          scrapeId: b.job_id,
          ...(b.ok ? {} : { error: b.error?.message ?? 'the page failed' }),
        }),
      };
      return { success: true, data };
    })();

  const map = async (request: FastifyRequest<{ Body: FirecrawlMapBody }>, reply: FastifyReply) =>
    (async () => {
      const body = request.body;
      const sitemap = body.sitemap ?? (body.sitemapOnly ? 'only' : body.ignoreSitemap ? 'skip' : 'include');
      const answer = await scrapes.map(
        request.userId,
        {
          url: body.url,
          ...(typeof body.search === 'string' && body.search !== '' ? { search: body.search.slice(0, 500) } : {}),
          limit: Math.min(Math.max(1, Math.floor(body.limit ?? 5000)), 5000),
          include_subdomains: body.includeSubdomains === true,
          sitemap,
          ...(typeof body.timeout === 'number' ? { timeout_ms: Math.min(body.timeout, fastify.config.scrape.maxTimeoutMs) } : {}),
        },
        request.log,
      );
      if (answer.code === 202) return reply.code(408).send({ success: false, error: 'the map had no outcome within the timeout', code: 'SCRAPE_TIMEOUT' });
      return { success: true, links: answer.body.links };
    })();

  const startCrawl = async (request: FastifyRequest<{ Body: FirecrawlCrawlBody }>, reply: FastifyReply, version: string) =>
    (async () => {
      const b = request.body;
      const depth = Math.min(10, Math.max(0, Math.floor(b.maxDiscoveryDepth ?? b.maxDepth ?? 10)));
      const sitemap = b.sitemap ?? (b.ignoreSitemap ? 'skip' : 'include');
      // Firecrawl's paths are regular expressions on the path: Trawl's patterns are RE2 on the whole URL.
      const outcome = await fastify.crawls.submit(request.userId, {
        start_urls: [b.url],
        depth,
        max_pages: Math.min(Math.max(1, Math.floor(b.limit ?? 100)), 100_000),
        formats: ['markdown', 'metadata'],
        ignore_cache: true,
        sitemap,
        ...(b.includePaths?.length ? { include_patterns: b.includePaths.slice(0, 50) } : {}),
        ...(b.excludePaths?.length ? { exclude_patterns: b.excludePaths.slice(0, 50) } : {}),
        ...(b.allowSubdomains ? { scope: 'same_domain' as const } : {}),
        ...(b.scrapeOptions?.headers && typeof b.scrapeOptions.headers === 'object' ? { headers: b.scrapeOptions.headers } : {}),
        only_main_content: b.scrapeOptions?.onlyMainContent !== false,
      });
      return { success: true, id: outcome.job_id, url: `${origin(request)}/${version}/crawl/${outcome.job_id}` };
    })();

  const crawlStatus = async (request: FastifyRequest<{ Params: { id: string }; Querystring: { cursor?: string } }>, reply: FastifyReply, version: string) =>
    (async () => {
      const { id } = request.params;
      const job = await findJob(fastify.db, id, request.userId);
      if (!job) throw new ApiError('JOB_NOT_FOUND', `no crawl ${id}`);
      const after = decodeCursor(request.query.cursor);
      const pages = await listPages(fastify.db, { jobId: id, ok: true, limit: CRAWL_PAGE, ...(after ? { after } : {}) });
      const data = await Promise.all(
        pages.map(async (page) => {
          const read = async (format: string) => {
            const hash = page.formats.find((f) => f.format === format)?.hash;
            return hash ? fastify.content.get(hash).then((o) => o.body.toString('utf8'), (err: unknown) => (err instanceof ContentNotFoundError ? null : Promise.reject(err))) : null;
          };
          const [markdown, stored] = await Promise.all([read('markdown'), read('metadata')]);
          const metadata = answerMetadata(stored, null);
          return { markdown: markdown ?? '', metadata: firecrawlMetadata({ metadata, sourceURL: page.url, url: page.final_url ?? page.url, statusCode: page.status ?? 0, contentType: page.content_type, scrapeId: page.fetch_id }) };
        }),
      );
      // Completed once the job is over and every page it counted is readable (the topics are projected apart).
      const { rows } = await fastify.db.query<{ n: string }>('SELECT count(*) AS n FROM job_pages WHERE job_id = $1', [id]);
      const settled = Number(rows[0]?.n ?? 0) >= job.pages_fetched + job.pages_failed;
      const status = job.status === 'finished' ? (settled ? 'completed' : 'scraping') : job.status === 'failed' || job.status === 'cancelled' ? job.status : 'scraping';
      const last = pages[pages.length - 1];
      const next = pages.length === CRAWL_PAGE && last ? `${origin(request)}/${version}/crawl/${id}?cursor=${encodeCursor(last.sort_at, last.fetch_id)}` : null;
      return {
        success: true,
        status,
        total: Math.max(job.pages_fetched + job.pages_failed, job.urls_seen),
        completed: job.pages_fetched,
        creditsUsed: job.pages_fetched,
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
        next,
        data,
      };
    })();

  for (const version of ['v1', 'v2']) {
    fastify.post<{ Body: FirecrawlCrawlBody }>(`/${version}/crawl`, {
      config: { rateLimit: 'crawl' },
      schema: { hide: true, body: looseBody({ limit: { type: 'integer', minimum: 1 }, maxDiscoveryDepth: { type: 'integer', minimum: 0 }, maxDepth: { type: 'integer', minimum: 0 }, includePaths: { type: 'array', items: { type: 'string', maxLength: 500 } }, excludePaths: { type: 'array', items: { type: 'string', maxLength: 500 } }, sitemap: { type: 'string', enum: ['include', 'only', 'skip'] } }) },
    }, (request, reply) => startCrawl(request, reply, version));
    fastify.get<{ Params: { id: string }; Querystring: { cursor?: string } }>(`/${version}/crawl/:id`, {
      schema: { hide: true, params: jobIdParams, querystring: { type: 'object', properties: { cursor: { type: 'string', maxLength: 500 } } } },
    }, (request, reply) => crawlStatus(request, reply, version));
    fastify.post<{ Body: FirecrawlScrapeBody }>(`/${version}/scrape`, {
      config: { rateLimit: 'crawl' },
      schema: { hide: true, body: looseBody({ formats: { type: 'array', maxItems: 20 }, timeout: { type: 'integer', minimum: 1 }, headers: { type: 'object', additionalProperties: { type: 'string' } }, maxAge: { type: 'integer', minimum: 0 }, onlyMainContent: { type: 'boolean' } }) },
    }, scrape);
    fastify.post<{ Body: FirecrawlMapBody }>(`/${version}/map`, {
      config: { rateLimit: 'crawl' },
      schema: { hide: true, body: looseBody({ search: { type: 'string', maxLength: 500 }, limit: { type: 'integer', minimum: 1 }, includeSubdomains: { type: 'boolean' }, sitemap: { type: 'string', enum: ['include', 'only', 'skip'] }, timeout: { type: 'integer', minimum: 1 } }) },
    }, map);
  }
};

export default firecrawlRoutes;
